// The batched text protocol of the ahasd Verilator harness, a thin layer over harness.h.
//
// Python writes a batch of command lines ending with `end`; the harness runs them in order and
// answers the whole batch at once: the output lines of the commands that have any, then a line
// `.`. The first failing command answers `! line N: <message>` and the rest of the batch up to
// `end` is skipped (the harness stays usable). Values are hex without a prefix; names are port,
// domain, source, sink and lane names (sources, sinks, watches and buses may also be given by
// their index, in order of declaration). The commands (see ahasd.cosim.harness):
//
//   domain NAME CLK RST|- PERIOD_PS      reset DOMAIN CYCLES         wait DOMAIN CYCLES
//   source NAME DOMAIN VALID READY|- PAYLOAD,..|- [LANE]             gaps SOURCE P_IDLE SEED
//   timeout SOURCE CYCLES                log SOURCE                  s SOURCE HEX..   (push)
//   lset LANE PORT HEX    lpulse LANE PORT HEX    lidle LANE CYCLES
//   sink NAME DOMAIN VALID READY|- PAYLOAD,..|-
//   ready SINK always|never|random P SEED|pattern BITS
//   drive PORT DOMAIN always|never|random P SEED|pattern BITS        watch PORT DOMAIN
//   axil PREFIX DOMAIN    rd BUS ADDR MAX_CYCLES -> "DATA RESP"      wr BUS ADDR DATA STRB MAX
//   set PORT HEX   get PORT -> HEX   drain DOMAIN MAX   until PORT HEX DOMAIN MAX
//   count SINK TOTAL DOMAIN MAX      time -> "PS CYCLES.."
//   pop SINK -> "N" + N lines "CYCLE HEX.."   acc SOURCE -> "N" + N lines "CYCLE WAITED"
//   seen WATCH -> "N" + N lines "CYCLE HEX"     pending LANE -> "N" (items not yet accepted)
//   vports DOMAIN IN,..|- OUT,..|-   v HEX.. -> "HEX.." (drive the inputs, sample, one cycle)
//   end   quit
#include "harness.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Error : std::runtime_error { using std::runtime_error::runtime_error; };

struct Session {
    ahs_harness* h;
    std::string out;
    std::vector<uint32_t> words;
    std::vector<uint64_t> c1, c2;
    int v_domain = -1;
    std::vector<int> v_in, v_out;

    void check(int rc) { if (rc < 0) throw Error(ahs_error(h)); }

    int port(const char* name) {
        int p = ahs_port(h, name);
        if (p < 0) throw Error(std::string("no port named ") + name);
        return p;
    }
    std::vector<int> ports(const char* list) {
        std::vector<int> r;
        if (std::strcmp(list, "-") == 0) return r;
        std::string s(list);
        size_t at = 0;
        while (at <= s.size()) {
            size_t comma = s.find(',', at);
            if (comma == std::string::npos) comma = s.size();
            r.push_back(port(s.substr(at, comma - at).c_str()));
            at = comma + 1;
        }
        return r;
    }
    static uint64_t number(const char* t) {
        char* end;
        if (!*t) throw Error("missing number");
        unsigned long long v = std::strtoull(t, &end, 0);
        if (*end || *t == '-') throw Error(std::string("bad number '") + t + "'");
        return v;
    }
    int index(const char* t, int (*find)(const ahs_harness*, const char*), const char* kind) {
        int i = find(h, t);
        if (i >= 0) return i;
        if (*t >= '0' && *t <= '9') return int(number(t));
        throw Error(std::string("no ") + kind + " named " + t);
    }
    int domain(const char* t) { return index(t, ahs_domain_index, "clock domain"); }
    int source(const char* t) { return index(t, ahs_source_index, "source"); }
    int sink(const char* t) { return index(t, ahs_sink_index, "sink"); }
    int lane(const char* t) { return index(t, ahs_lane_index, "lane"); }

    // Parse `t` as the value of port p into words[at..]; refuse bad digits and values that
    // do not fit the port.
    void hex(const char* t, int p, size_t at) {
        int width = ahs_port_width(h, p), n = ahs_words(width);
        words.resize(at + n);
        std::fill(words.begin() + at, words.end(), 0);
        size_t len = std::strlen(t);
        if (!len) throw Error("missing value");
        for (size_t i = 0; i < len; i++) {   // i: the digit's place, from the least significant
            char c = t[len - 1 - i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) throw Error(std::string("bad hex value '") + t + "'");
            if (!d) continue;
            int top = 4 * int(i) + (d > 7 ? 4 : d > 3 ? 3 : d > 1 ? 2 : 1);   // bits it needs
            if (top > width)
                throw Error(std::string("value ") + t + " does not fit port " +
                            ahs_port_name(p) + " (" + std::to_string(width) + " bits)");
            words[at + i / 8] |= uint32_t(d) << (4 * (i % 8));
        }
    }
    const char* ahs_port_name(int p) { return port_names[p].c_str(); }
    std::vector<std::string> port_names;
    std::vector<std::vector<int>> src_payload, sink_payload;
    std::vector<int> watch_port;
    int domains = 0;

    void put_hex(const uint32_t* w, int n) {
        int top = n - 1;
        while (top > 0 && !w[top]) top--;
        char buf[16];
        snprintf(buf, sizeof buf, "%x", w[top]);
        out += buf;
        for (int i = top - 1; i >= 0; i--) { snprintf(buf, sizeof buf, "%08x", w[i]); out += buf; }
    }
    void put_number(uint64_t v) { out += std::to_string(v); }

    int pattern_mode(char** a, int n, int at, double* p, uint64_t* seed, const char** bits) {
        if (at >= n) throw Error("missing pattern (always, never, random P SEED, pattern BITS)");
        std::string m = a[at];
        if (m == "always") return AHS_ALWAYS;
        if (m == "never") return AHS_NEVER;
        if (m == "random" && at + 2 < n) {
            *p = std::atof(a[at + 1]);
            *seed = number(a[at + 2]);
            return AHS_RANDOM;
        }
        if (m == "pattern" && at + 1 < n) { *bits = a[at + 1]; return AHS_PATTERN; }
        throw Error("bad pattern '" + m + "' (always, never, random P SEED, pattern BITS)");
    }

    void need(int n, int want, const char* usage) {
        if (n < want) throw Error(std::string("usage: ") + usage);
    }

    bool run(char** a, int n);
};

bool Session::run(char** a, int n) {
    std::string c = a[0];
    if (c == "s") {
        need(n, 2, "s SOURCE HEX..");
        int src = source(a[1]);
        if (src < 0 || src >= int(src_payload.size()))
            throw Error("no source " + std::string(a[1]));
        const std::vector<int>& pay = src_payload[src];
        if (n - 2 != int(pay.size()))
            throw Error("source " + std::string(a[1]) + " takes " + std::to_string(pay.size()) +
                        " payload values, not " + std::to_string(n - 2));
        words.clear();
        for (size_t i = 0; i < pay.size(); i++) hex(a[i + 2], pay[i], words.size());
        check(ahs_push(h, src, words.data()));
    } else if (c == "v") {
        if (v_domain < 0) throw Error("v before vports");
        if (n - 1 != int(v_in.size()))
            throw Error("v takes " + std::to_string(v_in.size()) + " values, not " +
                        std::to_string(n - 1));
        for (int i = 0; i < int(v_in.size()); i++) {
            hex(a[i + 1], v_in[i], 0);
            check(ahs_poke(h, v_in[i], words.data()));
        }
        ahs_settle(h);
        for (size_t i = 0; i < v_out.size(); i++) {
            words.resize(ahs_words(ahs_port_width(h, v_out[i])));
            check(ahs_get(h, v_out[i], words.data()));
            if (i) out += ' ';
            put_hex(words.data(), int(words.size()));
        }
        out += '\n';
        check(ahs_step(h, v_domain, 1));
    } else if (c == "domain") {
        need(n, 5, "domain NAME CLK RST|- PERIOD_PS");
        check(ahs_domain(h, a[1], a[2], std::strcmp(a[3], "-") ? a[3] : nullptr, number(a[4])));
        domains++;
    } else if (c == "reset") {
        need(n, 3, "reset DOMAIN CYCLES");
        check(ahs_reset(h, domain(a[1]), int(number(a[2]))));
    } else if (c == "wait") {
        need(n, 3, "wait DOMAIN CYCLES");
        check(ahs_step(h, domain(a[1]), number(a[2])));
    } else if (c == "source" || c == "sink") {
        need(n, 6, "source|sink NAME DOMAIN VALID READY|- PAYLOAD,..|- [LANE]");
        int ready = std::strcmp(a[4], "-") ? port(a[4]) : -1;
        std::vector<int> pay = ports(a[5]);
        if (c == "source") {
            int i = ahs_source(h, a[1], domain(a[2]), port(a[3]), ready, pay.data(),
                               int(pay.size()), n > 6 ? a[6] : nullptr);
            check(i);
            src_payload.resize(i + 1);
            src_payload[i] = pay;
        } else {
            int i = ahs_sink(h, a[1], domain(a[2]), port(a[3]), ready, pay.data(), int(pay.size()));
            check(i);
            sink_payload.resize(i + 1);
            sink_payload[i] = pay;
        }
    } else if (c == "gaps") {
        need(n, 4, "gaps SOURCE P_IDLE SEED");
        check(ahs_source_gaps(h, source(a[1]), std::atof(a[2]), number(a[3])));
    } else if (c == "timeout") {
        need(n, 3, "timeout SOURCE CYCLES");
        check(ahs_source_timeout(h, source(a[1]), number(a[2])));
    } else if (c == "log") {
        need(n, 2, "log SOURCE");
        check(ahs_source_log(h, source(a[1]), 1));
    } else if (c == "lset" || c == "lpulse") {
        need(n, 4, "lset|lpulse LANE PORT HEX");
        int l = lane(a[1]), p = port(a[2]);
        hex(a[3], p, 0);
        check(c == "lset" ? ahs_lane_set(h, l, p, words.data())
                          : ahs_lane_pulse(h, l, p, words.data()));
    } else if (c == "lidle") {
        need(n, 3, "lidle LANE CYCLES");
        check(ahs_lane_idle(h, lane(a[1]), number(a[2])));
    } else if (c == "ready" || c == "drive") {
        bool rd = c == "ready";
        need(n, rd ? 3 : 4, rd ? "ready SINK PATTERN.." : "drive PORT DOMAIN PATTERN..");
        double p = 1.0; uint64_t seed = 0; const char* bits = nullptr;
        int mode = pattern_mode(a, n, rd ? 2 : 3, &p, &seed, &bits);
        check(rd ? ahs_sink_ready(h, sink(a[1]), mode, p, seed, bits)
                 : ahs_drive(h, port(a[1]), domain(a[2]), mode, p, seed, bits));
    } else if (c == "watch") {
        need(n, 3, "watch PORT DOMAIN");
        int p = port(a[1]);
        check(ahs_watch(h, p, domain(a[2])));
        watch_port.push_back(p);
    } else if (c == "axil") {
        need(n, 3, "axil PREFIX DOMAIN");
        check(ahs_axil(h, a[1], domain(a[2])));
    } else if (c == "rd") {
        need(n, 4, "rd BUS ADDR MAX_CYCLES");
        uint32_t data; int resp;
        check(ahs_mmio_read(h, int(number(a[1])), uint32_t(number(a[2])), &data, &resp,
                            number(a[3])));
        put_hex(&data, 1);
        out += ' ' + std::to_string(resp) + '\n';
    } else if (c == "wr") {
        need(n, 6, "wr BUS ADDR DATA STRB MAX_CYCLES");
        int resp;
        check(ahs_mmio_write(h, int(number(a[1])), uint32_t(number(a[2])), uint32_t(number(a[3])),
                             uint32_t(number(a[4])), &resp, number(a[5])));
        out += std::to_string(resp) + '\n';
    } else if (c == "set" || c == "until") {
        need(n, c == "set" ? 3 : 5, c == "set" ? "set PORT HEX" : "until PORT HEX DOMAIN MAX");
        int p = port(a[1]);
        hex(a[2], p, 0);
        check(c == "set" ? ahs_set(h, p, words.data())
                         : ahs_until(h, p, words.data(), domain(a[3]), number(a[4])));
    } else if (c == "get") {
        need(n, 2, "get PORT");
        int p = port(a[1]);
        words.resize(ahs_words(ahs_port_width(h, p)));
        check(ahs_get(h, p, words.data()));
        put_hex(words.data(), int(words.size()));
        out += '\n';
    } else if (c == "drain") {
        need(n, 3, "drain DOMAIN MAX_CYCLES");
        check(ahs_drain(h, domain(a[1]), number(a[2])));
    } else if (c == "count") {
        need(n, 5, "count SINK TOTAL DOMAIN MAX_CYCLES");
        check(ahs_until_count(h, sink(a[1]), number(a[2]), domain(a[3]), number(a[4])));
    } else if (c == "time") {
        put_number(ahs_time_ps(h));
        for (int d = 0; d < domains; d++) { out += ' '; put_number(ahs_cycles(h, d)); }
        out += '\n';
    } else if (c == "pop" || c == "seen") {
        need(n, 2, "pop SINK | seen WATCH");
        bool pop = c == "pop";
        int i = pop ? sink(a[1]) : int(number(a[1]));
        if (i < 0 || i >= int(pop ? sink_payload.size() : watch_port.size()))
            throw Error(std::string(pop ? "no sink " : "no watch ") + a[1]);
        std::vector<int> pay = pop ? sink_payload[i] : std::vector<int>{watch_port.at(i)};
        size_t per = 0;
        for (int p : pay) per += ahs_words(ahs_port_width(h, p));
        size_t count = pop ? ahs_collected(h, i) : SIZE_MAX;
        if (!pop) {   // a watch: take everything it logged
            std::vector<uint64_t> cyc(1 << 16);
            std::vector<uint32_t> w((1 << 16) * per);
            std::vector<uint64_t> all_c; std::vector<uint32_t> all_w;
            size_t got;
            while ((got = ahs_watched(h, i, cyc.data(), w.data(), 1 << 16)) > 0) {
                all_c.insert(all_c.end(), cyc.begin(), cyc.begin() + got);
                all_w.insert(all_w.end(), w.begin(), w.begin() + got * per);
            }
            c1.swap(all_c); words.swap(all_w);
            count = c1.size();
        } else {
            c1.resize(count);
            words.resize(count * per);
            ahs_pop(h, i, c1.data(), words.data(), count);
        }
        put_number(count);
        out += '\n';
        for (size_t k = 0; k < count; k++) {
            put_number(c1[k]);
            const uint32_t* w = words.data() + k * per;
            for (int p : pay) {
                int nw = ahs_words(ahs_port_width(h, p));
                out += ' ';
                put_hex(w, nw);
                w += nw;
            }
            out += '\n';
        }
    } else if (c == "acc") {
        need(n, 2, "acc SOURCE");
        int i = source(a[1]);
        c1.resize(1 << 16); c2.resize(1 << 16);
        std::string body;
        size_t total = 0, got;
        while ((got = ahs_accepted(h, i, c1.data(), c2.data(), c1.size())) > 0) {
            for (size_t k = 0; k < got; k++)
                body += std::to_string(c1[k]) + ' ' + std::to_string(c2[k]) + '\n';
            total += got;
        }
        out += std::to_string(total) + '\n' + body;
    } else if (c == "pending") {
        need(n, 2, "pending LANE");
        out += std::to_string(ahs_lane_pending(h, lane(a[1]))) + '\n';
    } else if (c == "vports") {
        need(n, 4, "vports DOMAIN IN,..|- OUT,..|-");
        v_domain = domain(a[1]);
        v_in = ports(a[2]);
        v_out = ports(a[3]);
    } else {
        throw Error("unknown command '" + c + "'");
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    ahs_design* design = ahs_design_new(argc, argv);
    Session s;
    s.h = ahs_create(design);
    for (int p = 0; p < design->n_ports; p++) s.port_names.push_back(design->ports[p].name);
    char* line = nullptr;
    size_t cap = 0;
    ssize_t len;
    long number = 0;
    bool skipping = false, quit = false;
    std::vector<char*> args;
    while (!quit && (len = getline(&line, &cap, stdin)) >= 0) {
        number++;
        args.clear();
        for (char* t = std::strtok(line, " \t\r\n"); t; t = std::strtok(nullptr, " \t\r\n"))
            args.push_back(t);
        if (args.empty()) continue;
        if (std::strcmp(args[0], "end") == 0 || std::strcmp(args[0], "quit") == 0) {
            quit = args[0][0] == 'q';
            s.out += ".\n";
            std::fwrite(s.out.data(), 1, s.out.size(), stdout);
            std::fflush(stdout);
            s.out.clear();
            skipping = false;
            continue;
        }
        if (skipping) continue;
        try {
            s.run(args.data(), int(args.size()));
        } catch (const std::exception& e) {
            s.out += "! line " + std::to_string(number) + ": " + e.what() + "\n";
            skipping = true;
        }
    }
    std::free(line);
    ahs_destroy(s.h);
    return 0;
}
