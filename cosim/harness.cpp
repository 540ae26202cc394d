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
        most = std::max(most, size_t(ahs_words(design->ports[i].width)));
    }
    h->scratch.resize(most);
    h->owner.resize(design->n_ports);
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

int ahs_poke(ahs_harness* h, int port, const uint32_t* words) {
    if (port < 0 || port >= h->d->n_ports) return h->fail("no port %d", port);
    if (!h->port(port).is_input) return h->fail("port %s is an output", h->port(port).name);
    h->set_words(port, words);
    return 0;
}

void ahs_settle(ahs_harness* h) { h->eval(); }

int ahs_set(ahs_harness* h, int port, const uint32_t* words) {
    if (ahs_poke(h, port, words) < 0) return -1;
    h->eval();
    return 0;
}

int ahs_get(ahs_harness* h, int port, uint32_t* words) {
    if (port < 0 || port >= h->d->n_ports) return h->fail("no port %d", port);
    h->get_words(port, words);
    return 0;
}


// ---- clock domains and time ---------------------------------------------------------------

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
    std::string who = std::string("clock domain ") + name;
    if (!h->claimable({c, r}, who)) return -1;
    h->claim({c, r}, who);
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
    if (cycles < 1)
        return h->fail("reset of %s: %d cycles, must be >= 1", dom.name.c_str(), cycles);
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
    std::vector<int> driven(s.payload);
    driven.push_back(valid);
    std::string who = std::string("source ") + name;
    if (!h->claimable(driven, who)) return -1;
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
    h->claim(driven, who);
    h->sources.push_back(s);
    h->set64(valid, 0);
    h->eval();
    return int(h->sources.size()) - 1;
}

int ahs_source_index(const ahs_harness* h, const char* name) {
    for (size_t i = 0; i < h->sources.size(); i++) if (h->sources[i].name == name) return int(i);
    return -1;
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
    std::string who = std::string("sink ") + name;
    if (!h->claimable({ready}, who)) return -1;
    h->claim({ready}, who);
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

}  // extern "C"
