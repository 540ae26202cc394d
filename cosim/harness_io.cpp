// The ahasd Verilator harness: port drivers, watches and AXI4-Lite masters (C API of harness.h).
#include "harness_core.h"

#include <algorithm>
#include <cstring>

extern "C" {

// ---- port drivers, watches -----------------------------------------------------------------

int ahs_drive(ahs_harness* h, int port, int domain, int mode, double p_high, uint64_t seed,
              const char* pattern) {
    if (bad_domain(h, domain)) return -1;
    if (port < 0 || port >= h->d->n_ports || !h->port(port).is_input || h->port(port).width != 1)
        return h->fail("drive: port %d is not a 1-bit input", port);
    bool ok;
    Driver drv{port, domain, make_pattern(h, mode, p_high, seed, pattern, &ok)};
    if (!ok || !h->claimable({port}, "a drive pattern")) return -1;
    h->claim({port}, "a drive pattern");
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
    }
    std::vector<int> inputs;
    for (auto& p : ports) if (p.input) inputs.push_back(*p.at);
    std::string who = std::string("AXI4-Lite bus ") + prefix;
    if (!h->claimable(inputs, who)) return -1;
    h->claim(inputs, who);
    for (int p : inputs) h->set64(p, 0);
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
