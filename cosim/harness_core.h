// Private to harness.cpp: the state of the harness core and its cycle loop (see harness.h).
#ifndef AHASD_HARNESS_CORE_H
#define AHASD_HARNESS_CORE_H
#include "harness.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace ahs_detail {

enum { ITEM_STREAM, ITEM_SET, ITEM_PULSE, ITEM_IDLE };

struct Pattern {   // a 0/1 sequence: constant, random (xorshift64*) or a repeating bit string
    int mode = AHS_ALWAYS;
    double p = 1.0;
    uint64_t state = 1;
    std::string bits;
    size_t pos = 0;
    bool next() {
        switch (mode) {
        case AHS_ALWAYS: return true;
        case AHS_NEVER: return false;
        case AHS_RANDOM:
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
            return double((state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53 < p;
        default: {
            bool bit = bits[pos] == '1';
            pos = (pos + 1) % bits.size();
            return bit;
        }
        }
    }
};

struct Item { int kind; int target; uint64_t n; std::vector<uint32_t> w; };

struct Lane {
    std::string name;
    int domain;
    std::deque<Item> q;
    bool presenting = false;
    uint64_t waited = 0;
    int clear_port = -1;   // a valid or pulse port to drop after the edge
};

struct Source {
    std::string name;
    int domain, valid, ready, lane, words = 0;
    std::vector<int> payload;
    Pattern gaps;
    uint64_t max_wait = 1u << 20;
    bool log = false;
    std::vector<uint64_t> acc_cycle, acc_wait;
};

struct Sink {
    std::string name;
    int domain, valid, ready, words = 0;
    std::vector<int> payload;
    Pattern pattern;
    bool ready_now = true;
    uint64_t total = 0;
    std::vector<uint64_t> cycles;
    std::vector<uint32_t> data;
    size_t read = 0;
};

struct Driver { int port, domain; Pattern pattern; };

struct Watch {
    int port, domain;
    bool started = false;
    std::vector<uint32_t> last, data;
    std::vector<uint64_t> cycles;
};

struct Bus {
    int domain;
    int awaddr, awvalid, awready, wdata, wstrb, wvalid, wready, bresp, bvalid, bready;
    int araddr, arvalid, arready, rdata, rresp, rvalid, rready;
    int op = 0;            // 0 idle, 1 write, 2 read
    bool a_done = false, w_done = false, done = false, clear = false;
    uint32_t data = 0;
    int resp = 0;
};

struct Domain {
    std::string name;
    int clk, rst;
    uint64_t period, next_rise, cycles = 0;
    int rst_left = 0;
    std::vector<int> lanes, sinks, drivers, watches, buses;
};

}  // namespace ahs_detail
using namespace ahs_detail;

struct ahs_harness {
    ahs_design* d;
    std::string err;
    uint64_t time = 0;
    std::vector<Domain> domains;
    std::vector<Lane> lanes;
    std::vector<Source> sources;
    std::vector<Sink> sinks;
    std::vector<Driver> drivers;
    std::vector<Watch> watches;
    std::vector<Bus> buses;
    std::unordered_map<std::string, int> port_index;
    std::vector<std::string> owner;   // per input port: who drives it ("" = only `set`)
    std::vector<uint32_t> scratch;

    int fail(const char* fmt, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        err = buf;
        return -1;
    }
    const ahs_port_info& port(int i) const { return d->ports[i]; }
    // An input is driven by one agent: refuse a second one (it would fight the first).
    bool claimable(const std::vector<int>& ports, const std::string& who) {
        for (int p : ports)
            if (p >= 0 && !owner[p].empty() && owner[p] != who) {
                fail("port %s is already driven by %s", port(p).name, owner[p].c_str());
                return false;
            }
        return true;
    }
    void claim(const std::vector<int>& ports, const std::string& who) {
        for (int p : ports) if (p >= 0) owner[p] = who;
    }
    void eval() { d->eval(d->model); }

    uint64_t get64(int i) const {
        const ahs_port_info& p = port(i);
        if (p.width <= 8) return *static_cast<uint8_t*>(p.data);
        if (p.width <= 16) return *static_cast<uint16_t*>(p.data);
        if (p.width <= 32) return *static_cast<uint32_t*>(p.data);
        return *static_cast<uint64_t*>(p.data);   // wide ports: the low 64 bits
    }
    void set64(int i, uint64_t v) {
        const ahs_port_info& p = port(i);
        if (p.width < 64) v &= (uint64_t(1) << p.width) - 1;
        if (p.width <= 8) *static_cast<uint8_t*>(p.data) = uint8_t(v);
        else if (p.width <= 16) *static_cast<uint16_t*>(p.data) = uint16_t(v);
        else if (p.width <= 32) *static_cast<uint32_t*>(p.data) = uint32_t(v);
        else if (p.width <= 64) *static_cast<uint64_t*>(p.data) = v;
        else {
            uint32_t w[2] = {uint32_t(v), uint32_t(v >> 32)};
            std::vector<uint32_t> all(ahs_words(p.width), 0);
            all[0] = w[0]; all[1] = w[1];
            set_words(i, all.data());
        }
    }
    void get_words(int i, uint32_t* w) const {
        const ahs_port_info& p = port(i);
        if (p.width > 64) { std::memcpy(w, p.data, 4 * ahs_words(p.width)); return; }
        uint64_t v = get64(i);
        w[0] = uint32_t(v);
        if (p.width > 32) w[1] = uint32_t(v >> 32);
    }
    void set_words(int i, const uint32_t* w) {
        const ahs_port_info& p = port(i);
        if (p.width <= 64) {
            set64(i, p.width > 32 ? (uint64_t(w[1]) << 32 | w[0]) : w[0]);
            return;
        }
        int n = ahs_words(p.width);
        uint32_t* dst = static_cast<uint32_t*>(p.data);
        std::memcpy(dst, w, 4 * n);
        if (p.width % 32) dst[n - 1] &= (uint32_t(1) << (p.width % 32)) - 1;
    }
    bool bit(int i) const { return get64(i) & 1; }

    // ---- one cycle of a domain: sample before the edge, drive after it -------------------
    bool sample(Domain& dom) {
        for (int li : dom.lanes) {
            Lane& l = lanes[li];
            if (!l.presenting) continue;
            Item& it = l.q.front();
            if (it.kind == ITEM_STREAM) {
                Source& s = sources[it.target];
                if (s.ready < 0 || bit(s.ready)) {
                    if (s.log) {
                        s.acc_cycle.push_back(dom.cycles);
                        s.acc_wait.push_back(l.waited);
                    }
                    l.clear_port = s.valid;
                    l.q.pop_front();
                    l.presenting = false;
                } else if (++l.waited > s.max_wait) {
                    fail("source %s: item not accepted within %llu cycles of domain %s "
                         "(ready low since cycle %llu)", s.name.c_str(),
                         (unsigned long long)s.max_wait, dom.name.c_str(),
                         (unsigned long long)(dom.cycles - l.waited + 1));
                    l.waited = 0;   // reported once; the item stays offered
                    return false;
                }
            } else if (it.kind == ITEM_PULSE || --it.n == 0) {
                if (it.kind == ITEM_PULSE) l.clear_port = it.target;
                l.q.pop_front();
                l.presenting = false;
            }
        }
        for (int si : dom.sinks) {
            Sink& s = sinks[si];
            if (!bit(s.valid) || (s.ready >= 0 && !s.ready_now)) continue;
            s.cycles.push_back(dom.cycles);
            size_t at = s.data.size();
            s.data.resize(at + s.words);
            uint32_t* w = s.data.data() + at;
            for (int p : s.payload) { get_words(p, w); w += ahs_words(port(p).width); }
            s.total++;
        }
        for (int wi : dom.watches) {
            Watch& w = watches[wi];
            get_words(w.port, scratch.data());
            size_t n = w.last.size();
            if (w.started && std::memcmp(scratch.data(), w.last.data(), 4 * n) == 0) continue;
            w.started = true;
            std::memcpy(w.last.data(), scratch.data(), 4 * n);
            w.cycles.push_back(dom.cycles);
            w.data.insert(w.data.end(), w.last.begin(), w.last.end());
        }
        for (int bi : dom.buses) {
            Bus& b = buses[bi];
            if (b.op == 1) {
                if (!b.a_done && bit(b.awready)) b.a_done = true;
                if (!b.w_done && bit(b.wready)) b.w_done = true;
                if (bit(b.bvalid)) { b.resp = int(get64(b.bresp)); b.done = true; }
            } else if (b.op == 2) {
                if (!b.a_done && bit(b.arready)) b.a_done = true;
                if (bit(b.rvalid)) {
                    b.data = uint32_t(get64(b.rdata)); b.resp = int(get64(b.rresp)); b.done = true;
                }
            }
        }
        return true;
    }

    void present(Lane& l) {
        while (!l.presenting && !l.q.empty()) {
            Item& it = l.q.front();
            if (it.kind == ITEM_SET) {
                set_words(it.target, it.w.data());
                l.q.pop_front();
                continue;
            }
            if (it.kind == ITEM_IDLE && it.n == 0) { l.q.pop_front(); continue; }
            if (it.kind == ITEM_STREAM) {
                Source& s = sources[it.target];
                if (!s.gaps.next()) return;           // an idle cycle of the source
                const uint32_t* w = it.w.data();
                for (int p : s.payload) { set_words(p, w); w += ahs_words(port(p).width); }
                set64(s.valid, 1);
                l.waited = 0;
            } else if (it.kind == ITEM_PULSE) {
                set_words(it.target, it.w.data());
            }
            l.presenting = true;
        }
    }

    void drive(Domain& dom) {
        if (dom.rst_left > 0 && --dom.rst_left == 0) set64(dom.rst, 0);
        for (int li : dom.lanes) {
            Lane& l = lanes[li];
            if (l.clear_port >= 0) { set64(l.clear_port, 0); l.clear_port = -1; }
            present(l);
        }
        for (int si : dom.sinks) {
            Sink& s = sinks[si];
            if (s.ready >= 0) { s.ready_now = s.pattern.next(); set64(s.ready, s.ready_now); }
        }
        for (int di : dom.drivers) set64(drivers[di].port, drivers[di].pattern.next());
        for (int bi : dom.buses) {
            Bus& b = buses[bi];
            if (b.op == 1) { set64(b.awvalid, !b.a_done); set64(b.wvalid, !b.w_done); }
            if (b.op == 2) set64(b.arvalid, !b.a_done);
            if (b.done) {
                set64(b.bready, 0); set64(b.rready, 0); set64(b.awvalid, 0);
                set64(b.wvalid, 0); set64(b.arvalid, 0);
                b.op = 0;
            }
        }
    }

    // The next event: the rising edges of every domain due at the earliest time.
    bool tick() {
        if (domains.empty()) { fail("no clock domain is declared"); return false; }
        uint64_t t = UINT64_MAX;
        for (Domain& dom : domains) if (dom.next_rise < t) t = dom.next_rise;
        time = t;
        for (Domain& dom : domains) if (dom.next_rise == t && !sample(dom)) return false;
        for (Domain& dom : domains) if (dom.next_rise == t) set64(dom.clk, 1);
        eval();
        for (Domain& dom : domains) {
            if (dom.next_rise != t) continue;
            dom.cycles++;
            dom.next_rise += dom.period;
            drive(dom);
            set64(dom.clk, 0);
        }
        eval();
        return true;
    }

    // Advance until `done()` or max_cycles edges of domain `di` have passed.
    template <class F> int run_until(int di, uint64_t max_cycles, F done, const char* what) {
        if (di < 0 || di >= int(domains.size())) return fail("no clock domain %d", di);
        uint64_t start = domains[di].cycles;
        while (!done()) {
            if (domains[di].cycles - start >= max_cycles)
                return fail("timeout: %s after %llu cycles of domain %s", what,
                            (unsigned long long)max_cycles, domains[di].name.c_str());
            if (!tick()) return -1;
        }
        return 0;
    }
};

// Helpers of the C API functions (harness.cpp, harness_io.cpp).
inline bool bad_domain(ahs_harness* h, int domain) {
    if (domain >= 0 && domain < int(h->domains.size())) return false;
    h->fail("no clock domain %d", domain);
    return true;
}

inline Pattern make_pattern(ahs_harness* h, int mode, double p, uint64_t seed, const char* bits,
                            bool* ok) {
    Pattern pat;
    *ok = true;
    pat.mode = mode;
    if (mode == AHS_RANDOM) {
        if (!(p >= 0.0 && p <= 1.0)) { *ok = false; h->fail("probability %g is not in 0..1", p); }
        pat.p = p;
        pat.state = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
        if (!pat.state) pat.state = 1;
    } else if (mode == AHS_PATTERN) {
        pat.bits = bits ? bits : "";
        if (pat.bits.empty() || pat.bits.find_first_not_of("01") != std::string::npos) {
            *ok = false;
            h->fail("pattern '%s' must be a non-empty string of 0 and 1", pat.bits.c_str());
        }
    } else if (mode != AHS_ALWAYS && mode != AHS_NEVER) {
        *ok = false;
        h->fail("unknown pattern mode %d", mode);
    }
    return pat;
}

#endif
