// The ahasd Verilator harness core: clock domains, stream sources and sinks, port drivers,
// watches and AXI4-Lite masters over one Verilated design (the C API of harness.h).
#include "harness_core.h"

#include <algorithm>
#include <cstring>

extern "C" {

int ahs_words(int width) { return (width + 31) / 32; }

ahs_harness* ahs_create(ahs_design* design) {
    ahs_harness* h = new ahs_harness();
    h->d = design;
    size_t most = 2;
    for (int i = 0; i < design->n_ports; i++) {
        h->port_index[design->ports[i].name] = i;
        if (size_t(ahs_words(design->ports[i].width)) > most) most = ahs_words(design->ports[i].width);
    }
    h->scratch.resize(most);
    h->eval();
    return h;
}

void ahs_destroy(ahs_harness* h) {
    if (!h) return;
    h->d->finish(h->d->model);
    delete h;
}

const char* ahs_error(const ahs_harness* h) { return h->err.c_str(); }

int ahs_port(const ahs_harness* h, const char* name) {
    auto it = h->port_index.find(name);
    return it == h->port_index.end() ? -1 : it->second;
}

int ahs_port_width(const ahs_harness* h, int port) {
    return port >= 0 && port < h->d->n_ports ? h->d->ports[port].width : -1;
}

int ahs_set(ahs_harness* h, int port, const uint32_t* words) {
    if (port < 0 || port >= h->d->n_ports) return h->fail("no port %d", port);
    if (!h->port(port).is_input) return h->fail("port %s is an output", h->port(port).name);
    h->set_words(port, words);
    h->eval();
    return 0;
}

int ahs_get(ahs_harness* h, int port, uint32_t* words) {
    if (port < 0 || port >= h->d->n_ports) return h->fail("no port %d", port);
    h->get_words(port, words);
    return 0;
}


// ---- clock domains and time ---------------------------------------------------------------

static bool bad_domain(ahs_harness* h, int domain) {
    if (domain >= 0 && domain < int(h->domains.size())) return false;
    h->fail("no clock domain %d", domain);
    return true;
}

static int input_port(ahs_harness* h, const char* name, const char* role, int width) {
    int p = ahs_port(h, name);
    if (p < 0) return h->fail("%s: no port named %s", role, name);
    if (!h->port(p).is_input) return h->fail("%s: port %s is an output, not an input", role, name);
    if (width && h->port(p).width != width)
        return h->fail("%s: port %s is %d bits wide, not %d", role, name, h->port(p).width, width);
    return p;
}

int ahs_domain(ahs_harness* h, const char* name, const char* clk, const char* rst,
               uint64_t period_ps) {
    if (ahs_domain_index(h, name) >= 0) return h->fail("clock domain %s is declared twice", name);
    if (period_ps < 2) return h->fail("clock domain %s: period %llu ps is below 2 ps", name,
                                      (unsigned long long)period_ps);
    int c = input_port(h, clk, "clock", 1);
    if (c < 0) return -1;
    int r = -1;
    if (rst && (r = input_port(h, rst, "reset", 1)) < 0) return -1;
    Domain dom;
    dom.name = name; dom.clk = c; dom.rst = r; dom.period = period_ps;
    dom.next_rise = h->time + period_ps;   // the clock starts low, rises one period later
    h->domains.push_back(dom);
    h->set64(c, 0);
    h->eval();
    return int(h->domains.size()) - 1;
}

int ahs_domain_index(const ahs_harness* h, const char* name) {
    for (size_t i = 0; i < h->domains.size(); i++)
        if (h->domains[i].name == name) return int(i);
    return -1;
}

int ahs_reset(ahs_harness* h, int domain, int cycles) {
    if (bad_domain(h, domain)) return -1;
    Domain& dom = h->domains[domain];
    if (dom.rst < 0) return h->fail("clock domain %s has no reset port", dom.name.c_str());
    if (cycles < 1) return h->fail("reset of %s: %d cycles, must be >= 1", dom.name.c_str(), cycles);
    dom.rst_left = cycles;
    h->set64(dom.rst, 1);
    h->eval();
    return 0;
}

uint64_t ahs_time_ps(const ahs_harness* h) { return h->time; }
uint64_t ahs_cycles(const ahs_harness* h, int domain) {
    return domain >= 0 && domain < int(h->domains.size()) ? h->domains[domain].cycles : 0;
}

int ahs_step(ahs_harness* h, int domain, uint64_t cycles) {
    if (bad_domain(h, domain)) return -1;
    uint64_t end = h->domains[domain].cycles + cycles;
    while (h->domains[domain].cycles < end) if (!h->tick()) return -1;
    return 0;
}

int ahs_drain(ahs_harness* h, int domain, uint64_t max_cycles) {
    auto empty = [h] {
        for (Lane& l : h->lanes) if (!l.q.empty()) return false;
        return true;
    };
    int rc = h->run_until(domain, max_cycles, empty, "the sources did not drain");
    if (rc < 0 && h->err.rfind("timeout", 0) == 0) {
        for (Lane& l : h->lanes)
            if (!l.q.empty()) {
                h->err += "; lane " + l.name + " holds " + std::to_string(l.q.size()) + " items";
                break;
            }
    }
    return rc;
}

int ahs_until(ahs_harness* h, int port, const uint32_t* words, int domain, uint64_t max_cycles) {
    if (port < 0 || port >= h->d->n_ports) return h->fail("no port %d", port);
    size_t n = ahs_words(h->port(port).width);
    std::vector<uint32_t> now(n);
    std::string what = std::string("port ") + h->port(port).name + " did not reach its value";
    return h->run_until(domain, max_cycles, [&] {
        h->get_words(port, now.data());
        return std::memcmp(now.data(), words, 4 * n) == 0;
    }, what.c_str());
}

int ahs_until_count(ahs_harness* h, int sink, uint64_t total, int domain, uint64_t max_cycles) {
    if (sink < 0 || sink >= int(h->sinks.size())) return h->fail("no sink %d", sink);
    Sink& s = h->sinks[sink];
    std::string what = "sink " + s.name + " collected fewer than " + std::to_string(total) +
                       " items";
    return h->run_until(domain, max_cycles, [&] { return s.total >= total; }, what.c_str());
}

// ---- streams -------------------------------------------------------------------------------

static int stream_ports(ahs_harness* h, const char* name, int valid, int ready, const int* payload,
                        int n_payload, bool source, int* words) {
    int n = h->d->n_ports;
    for (int p : {valid, ready}) {
        if (p == ready && p < 0) continue;
        if (p < 0 || p >= n) return h->fail("stream %s: no port %d", name, p);
        if (h->port(p).width != 1)
            return h->fail("stream %s: handshake port %s is %d bits wide, must be 1", name,
                           h->port(p).name, h->port(p).width);
        bool drives = (p == valid) == source;   // a source drives valid, a sink drives ready
        if (bool(h->port(p).is_input) != drives)
            return h->fail("stream %s: port %s must be an %s", name, h->port(p).name,
                           drives ? "input" : "output");
    }
    *words = 0;
    for (int i = 0; i < n_payload; i++) {
        int p = payload[i];
        if (p < 0 || p >= n) return h->fail("stream %s: no payload port %d", name, p);
        if (bool(h->port(p).is_input) != source)
            return h->fail("stream %s: payload port %s must be an %s", name, h->port(p).name,
                           source ? "input" : "output");
        *words += ahs_words(h->port(p).width);
    }
    return 0;
}

int ahs_source(ahs_harness* h, const char* name, int domain, int valid, int ready,
               const int* payload, int n_payload, const char* lane) {
    if (bad_domain(h, domain)) return -1;
    if (ahs_source_index(h, name) >= 0) return h->fail("source %s is declared twice", name);
    Source s;
    if (stream_ports(h, name, valid, ready, payload, n_payload, true, &s.words) < 0) return -1;
    s.name = name; s.domain = domain; s.valid = valid; s.ready = ready;
    s.payload.assign(payload, payload + n_payload);
    std::string lane_name = lane ? lane : name;
    s.lane = ahs_lane_index(h, lane_name.c_str());
    if (s.lane >= 0 && h->lanes[s.lane].domain != domain)
        return h->fail("source %s: lane %s belongs to another clock domain", name, lane);
    if (s.lane < 0) {
        Lane l;
        l.name = lane_name; l.domain = domain;
        h->lanes.push_back(l);
        s.lane = int(h->lanes.size()) - 1;
        h->domains[domain].lanes.push_back(s.lane);
    }
    h->sources.push_back(s);
    h->set64(valid, 0);
    h->eval();
    return int(h->sources.size()) - 1;
}

int ahs_source_index(const ahs_harness* h, const char* name) {
    for (size_t i = 0; i < h->sources.size(); i++) if (h->sources[i].name == name) return int(i);
    return -1;
}

static Pattern make_pattern(ahs_harness* h, int mode, double p, uint64_t seed, const char* bits,
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

int ahs_source_gaps(ahs_harness* h, int source, double p_idle, uint64_t seed) {
    if (source < 0 || source >= int(h->sources.size())) return h->fail("no source %d", source);
    bool ok;
    Pattern pat = make_pattern(h, AHS_RANDOM, 1.0 - p_idle, seed, nullptr, &ok);
    if (!ok) return -1;
    if (p_idle == 0.0) pat.mode = AHS_ALWAYS;
    h->sources[source].gaps = pat;
    return 0;
}

int ahs_source_timeout(ahs_harness* h, int source, uint64_t max_wait) {
    if (source < 0 || source >= int(h->sources.size())) return h->fail("no source %d", source);
    h->sources[source].max_wait = max_wait;
    return 0;
}

int ahs_source_log(ahs_harness* h, int source, int on) {
    if (source < 0 || source >= int(h->sources.size())) return h->fail("no source %d", source);
    h->sources[source].log = on != 0;
    return 0;
}

static int enqueue(ahs_harness* h, int lane, Item&& item) {
    Lane& l = h->lanes[lane];
    l.q.push_back(std::move(item));
    if (!l.presenting && l.q.size() == 1) {   // an idle lane presents at the next edge
        h->present(l);
        h->eval();
    }
    return 0;
}

int ahs_push(ahs_harness* h, int source, const uint32_t* payload) {
    if (source < 0 || source >= int(h->sources.size())) return h->fail("no source %d", source);
    Source& s = h->sources[source];
    Item it{ITEM_STREAM, source, 0, std::vector<uint32_t>(payload, payload + s.words)};
    return enqueue(h, s.lane, std::move(it));
}

int ahs_lane_index(const ahs_harness* h, const char* name) {
    for (size_t i = 0; i < h->lanes.size(); i++) if (h->lanes[i].name == name) return int(i);
    return -1;
}

static int lane_item(ahs_harness* h, int lane, int kind, int port, const uint32_t* words,
                     uint64_t n) {
    if (lane < 0 || lane >= int(h->lanes.size())) return h->fail("no lane %d", lane);
    Item it{kind, port, n, {}};
    if (kind != ITEM_IDLE) {
        if (port < 0 || port >= h->d->n_ports || !h->port(port).is_input)
            return h->fail("lane %s: port %d is not an input", h->lanes[lane].name.c_str(), port);
        it.w.assign(words, words + ahs_words(h->port(port).width));
    }
    return enqueue(h, lane, std::move(it));
}

int ahs_lane_set(ahs_harness* h, int lane, int port, const uint32_t* words) {
    return lane_item(h, lane, ITEM_SET, port, words, 0);
}
int ahs_lane_pulse(ahs_harness* h, int lane, int port, const uint32_t* words) {
    return lane_item(h, lane, ITEM_PULSE, port, words, 0);
}
int ahs_lane_idle(ahs_harness* h, int lane, uint64_t cycles) {
    return lane_item(h, lane, ITEM_IDLE, -1, nullptr, cycles);
}
size_t ahs_lane_pending(const ahs_harness* h, int lane) {
    return lane >= 0 && lane < int(h->lanes.size()) ? h->lanes[lane].q.size() : 0;
}

size_t ahs_accepted(ahs_harness* h, int source, uint64_t* cycle, uint64_t* waited, size_t max) {
    if (source < 0 || source >= int(h->sources.size())) return 0;
    Source& s = h->sources[source];
    size_t n = std::min(max, s.acc_cycle.size());
    std::copy(s.acc_cycle.begin(), s.acc_cycle.begin() + n, cycle);
    std::copy(s.acc_wait.begin(), s.acc_wait.begin() + n, waited);
    s.acc_cycle.erase(s.acc_cycle.begin(), s.acc_cycle.begin() + n);
    s.acc_wait.erase(s.acc_wait.begin(), s.acc_wait.begin() + n);
    return n;
}

int ahs_sink(ahs_harness* h, const char* name, int domain, int valid, int ready,
             const int* payload, int n_payload) {
    if (bad_domain(h, domain)) return -1;
    if (ahs_sink_index(h, name) >= 0) return h->fail("sink %s is declared twice", name);
    Sink s;
    if (stream_ports(h, name, valid, ready, payload, n_payload, false, &s.words) < 0) return -1;
    s.name = name; s.domain = domain; s.valid = valid; s.ready = ready;
    s.payload.assign(payload, payload + n_payload);
    h->sinks.push_back(s);
    h->domains[domain].sinks.push_back(int(h->sinks.size()) - 1);
    if (ready >= 0) { h->set64(ready, 1); h->eval(); }
    return int(h->sinks.size()) - 1;
}

int ahs_sink_index(const ahs_harness* h, const char* name) {
    for (size_t i = 0; i < h->sinks.size(); i++) if (h->sinks[i].name == name) return int(i);
    return -1;
}

int ahs_sink_words(const ahs_harness* h, int sink) {
    return sink >= 0 && sink < int(h->sinks.size()) ? h->sinks[sink].words : -1;
}

int ahs_sink_ready(ahs_harness* h, int sink, int mode, double p_high, uint64_t seed,
                   const char* pattern) {
    if (sink < 0 || sink >= int(h->sinks.size())) return h->fail("no sink %d", sink);
    Sink& s = h->sinks[sink];
    if (s.ready < 0) return h->fail("sink %s has no ready port", s.name.c_str());
    bool ok;
    Pattern pat = make_pattern(h, mode, p_high, seed, pattern, &ok);
    if (!ok) return -1;
    s.pattern = pat;
    s.ready_now = s.pattern.next();    // the value for the coming edge
    h->set64(s.ready, s.ready_now);
    h->eval();
    return 0;
}

size_t ahs_pop(ahs_harness* h, int sink, uint64_t* cycle, uint32_t* words, size_t max) {
    if (sink < 0 || sink >= int(h->sinks.size())) return 0;
    Sink& s = h->sinks[sink];
    size_t n = std::min(max, s.cycles.size());
    std::copy(s.cycles.begin(), s.cycles.begin() + n, cycle);
    std::copy(s.data.begin(), s.data.begin() + n * s.words, words);
    s.cycles.erase(s.cycles.begin(), s.cycles.begin() + n);
    s.data.erase(s.data.begin(), s.data.begin() + n * s.words);
    return n;
}

size_t ahs_collected(const ahs_harness* h, int sink) {
    return sink >= 0 && sink < int(h->sinks.size()) ? h->sinks[sink].cycles.size() : 0;
}

// ---- port drivers, watches -----------------------------------------------------------------

int ahs_drive(ahs_harness* h, int port, int domain, int mode, double p_high, uint64_t seed,
              const char* pattern) {
    if (bad_domain(h, domain)) return -1;
    if (port < 0 || port >= h->d->n_ports || !h->port(port).is_input || h->port(port).width != 1)
        return h->fail("drive: port %d is not a 1-bit input", port);
    bool ok;
    Driver drv{port, domain, make_pattern(h, mode, p_high, seed, pattern, &ok)};
    if (!ok) return -1;
    for (int di : h->domains[domain].drivers)   // a new pattern replaces the port's old one
        if (h->drivers[di].port == port) { h->drivers[di] = drv; return di; }
    h->drivers.push_back(drv);
    h->domains[domain].drivers.push_back(int(h->drivers.size()) - 1);
    return int(h->drivers.size()) - 1;
}

int ahs_watch(ahs_harness* h, int port, int domain) {
    if (bad_domain(h, domain)) return -1;
    if (port < 0 || port >= h->d->n_ports) return h->fail("watch: no port %d", port);
    Watch w{port, domain};
    w.last.assign(ahs_words(h->port(port).width), 0);
    h->watches.push_back(w);
    h->domains[domain].watches.push_back(int(h->watches.size()) - 1);
    return int(h->watches.size()) - 1;
}

size_t ahs_watched(ahs_harness* h, int watch, uint64_t* cycle, uint32_t* words, size_t max) {
    if (watch < 0 || watch >= int(h->watches.size())) return 0;
    Watch& w = h->watches[watch];
    size_t n = std::min(max, w.cycles.size()), k = w.last.size();
    std::copy(w.cycles.begin(), w.cycles.begin() + n, cycle);
    std::copy(w.data.begin(), w.data.begin() + n * k, words);
    w.cycles.erase(w.cycles.begin(), w.cycles.begin() + n);
    w.data.erase(w.data.begin(), w.data.begin() + n * k);
    return n;
}

// ---- AXI4-Lite -----------------------------------------------------------------------------

int ahs_axil(ahs_harness* h, const char* prefix, int domain) {
    if (bad_domain(h, domain)) return -1;
    Bus b;
    b.domain = domain;
    struct { const char* suffix; int* at; bool input; } ports[] = {
        {"awaddr", &b.awaddr, true}, {"awvalid", &b.awvalid, true}, {"awready", &b.awready, false},
        {"wdata", &b.wdata, true}, {"wstrb", &b.wstrb, true}, {"wvalid", &b.wvalid, true},
        {"wready", &b.wready, false}, {"bresp", &b.bresp, false}, {"bvalid", &b.bvalid, false},
        {"bready", &b.bready, true}, {"araddr", &b.araddr, true}, {"arvalid", &b.arvalid, true},
        {"arready", &b.arready, false}, {"rdata", &b.rdata, false}, {"rresp", &b.rresp, false},
        {"rvalid", &b.rvalid, false}, {"rready", &b.rready, true}};
    for (auto& p : ports) {
        std::string name = std::string(prefix) + "_" + p.suffix;
        *p.at = ahs_port(h, name.c_str());
        if (*p.at < 0) return h->fail("AXI4-Lite bus %s: no port %s", prefix, name.c_str());
        if (bool(h->port(*p.at).is_input) != p.input)
            return h->fail("AXI4-Lite bus %s: port %s must be an %s", prefix, name.c_str(),
                           p.input ? "input" : "output");
        if (h->port(*p.at).width > 32)
            return h->fail("AXI4-Lite bus %s: port %s is wider than 32 bits", prefix, name.c_str());
        if (p.input) h->set64(*p.at, 0);
    }
    h->eval();
    h->buses.push_back(b);
    h->domains[domain].buses.push_back(int(h->buses.size()) - 1);
    return int(h->buses.size()) - 1;
}

static int mmio(ahs_harness* h, int bus, int op, uint32_t addr, uint32_t data, uint32_t strb,
                uint64_t max_cycles) {
    if (bus < 0 || bus >= int(h->buses.size())) return h->fail("no AXI4-Lite bus %d", bus);
    Bus& b = h->buses[bus];
    int aw = h->port(op == 1 ? b.awaddr : b.araddr).width;
    if (aw < 32 && addr >> aw) return h->fail("address 0x%X does not fit the %d-bit bus", addr, aw);
    if (strb > 0xF) return h->fail("write strobe 0x%X is wider than 4 bits", strb);
    b.op = op; b.a_done = b.w_done = b.done = false;
    if (op == 1) {
        h->set64(b.awaddr, addr); h->set64(b.wdata, data); h->set64(b.wstrb, strb);
        h->set64(b.awvalid, 1); h->set64(b.wvalid, 1); h->set64(b.bready, 1);
    } else {
        h->set64(b.araddr, addr); h->set64(b.arvalid, 1); h->set64(b.rready, 1);
    }
    h->eval();
    char what[96];
    snprintf(what, sizeof what, "AXI4-Lite %s of 0x%X got no response", op == 1 ? "write" : "read",
             addr);
    int rc = h->run_until(b.domain, max_cycles, [&] { return b.done; }, what);
    if (rc < 0) {   // abandon the transfer: drop every valid
        h->set64(b.awvalid, 0); h->set64(b.wvalid, 0); h->set64(b.arvalid, 0);
        b.op = 0;
        h->eval();
    }
    return rc;
}

int ahs_mmio_read(ahs_harness* h, int bus, uint32_t addr, uint32_t* data, int* resp,
                  uint64_t max_cycles) {
    if (mmio(h, bus, 2, addr, 0, 0, max_cycles) < 0) return -1;
    *data = h->buses[bus].data;
    *resp = h->buses[bus].resp;
    return 0;
}

int ahs_mmio_write(ahs_harness* h, int bus, uint32_t addr, uint32_t data, uint32_t strb,
                   int* resp, uint64_t max_cycles) {
    if (mmio(h, bus, 1, addr, data, strb, max_cycles) < 0) return -1;
    *resp = h->buses[bus].resp;
    return 0;
}

}  // extern "C"
