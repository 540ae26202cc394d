// Firmware in the loop: the C firmware (firmware/ahasd_driver.c, ahasd_control.c) linked with the
// Verilated controller top through the harness core (harness.h). The firmware's MMIO runs on the
// controller's AXI4-Lite port; the PIM side (sync clock: draft_in, record, tvc_inputs, task_done,
// feedback_out) and the NPU side (npu clock: draft_out, feedback_in) are driven from a scenario
// that ahasd.cosim.fw_loop makes from a golden-model decode trace.
//
// Scenario (stdin, one operation a line; numbers hex without prefix unless noted):
//   cfg KEY DEC          a firmware configuration value (ahasd_config member names)
//   init                 ahasd_open + ahasd_init -> "init RC" and its register writes "w ADDR DATA"
//   draft PAYLOAD KV NOW PENDING   set tvc_inputs, push a draft batch; wait for its decision
//   verify PAYLOAD       the NPU takes the oldest batch and pushes its verification result;
//                        wait until the PIM has taken the result
//   squash               the NPU takes the oldest batch and discards it
//   hsquash              the NPU squashes the look-ahead (a one-cycle pulse on squash): the draft
//                        queue discards every batch in it
//   request LENGTH       the PIM asks GTS to run a draft task (waits while drafting is withheld)
//   record TABLE CYCLES LENGTH     a PIM-measured TVC record
//   service              settle (the draft, record and feedback lanes drained, SETTLE more
//                        cycles; a withheld draft request may wait on), then the control loop runs
//                        while irq is high -> "service RC PENDING ACTIONS" and the firmware's
//                        register writes of the pass as "w ADDR DATA"
//   probe ADDR           one firmware read (ahasd_read) of ADDR -> "probe RC VALUE"
//   snap                 ahasd_wait_quiescent + ahasd_snapshot -> "snap RC W0 .. W63"
// At the end: every collected item, "decision DRAFT", "draft_out HEX..", "feedback_out HEX..",
// "task HEX", in order, then ".". A failure prints "! message" and exits 1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.h"
extern "C" {
#include "ahasd_driver.h"
}

namespace {

const uint64_t PIM_PS = 1250, NPU_PS = 1000;   // 800 MHz PIM, 1 GHz NPU
const uint64_t SETTLE = 80;                     // PIM cycles: TVC's divider and GTS finish
const uint64_t LIMIT = 20000;                   // any single wait, in cycles

struct Fail : std::runtime_error { using std::runtime_error::runtime_error; };

struct Loop {
    ahs_harness* h;
    int sync, npu, bus;
    int p_irq, p_kv, p_now, p_pending;
    int src_draft, src_record, src_feedback, src_request;
    int snk_decision, snk_draft_out, snk_feedback_out, snk_task;
    std::vector<std::string> log;     // register writes of the current service pass
    bool logging = false;
    ahasd_dev dev;
    ahasd_config cfg;

    void check(int rc) { if (rc < 0) throw Fail(ahs_error(h)); }
    int port(const char* name) {
        int p = ahs_port(h, name);
        if (p < 0) throw Fail(std::string("no port ") + name);
        return p;
    }
    void set(int p, uint64_t v) {
        uint32_t w[2] = {uint32_t(v), uint32_t(v >> 32)};
        check(ahs_set(h, p, w));
    }
    std::vector<uint32_t> words(const char* hex, int n) {   // a hex number as n LE words
        std::vector<uint32_t> w(n, 0);
        size_t len = std::strlen(hex);
        for (size_t i = 0; i < len; i++) {
            char c = hex[len - 1 - i];
            uint32_t d = c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0';
            if (i / 8 < size_t(n)) w[i / 8] |= d << (4 * (i % 8));
        }
        return w;
    }
    int source(const char* name, int domain, const char* stream) {
        std::string s(stream);
        int payload = port((s + "__payload").c_str());
        return ahs_source(h, name, domain, port((s + "__valid").c_str()),
                          port((s + "__ready").c_str()), &payload, 1, nullptr);
    }
    // The first of two port names the design has (the controller's decision and task outputs
    // are plain {valid, draft} / {start, payload} signals or always-ready streams).
    int sink(const char* name, int domain, const char* valid, const char* ready,
             const char* payload) {
        int p = port(payload);
        int rc = ahs_sink(h, name, domain, port(valid), ready ? port(ready) : -1, &p, 1);
        check(rc);
        return rc;
    }

    Loop(ahs_harness* harness) : h(harness) {
        check(sync = ahs_domain(h, "sync", "clk", "rst", PIM_PS));
        check(npu = ahs_domain(h, "npu", "npu_clk", "npu_rst", NPU_PS));
        check(bus = ahs_axil(h, "s_axil", sync));
        p_irq = port("irq");
        p_kv = port("tvc_inputs__kv_len");
        p_now = port("tvc_inputs__now");
        p_pending = port("tvc_inputs__pending");
        check(src_draft = source("draft_in", sync, "draft_in"));
        check(src_record = source("record", sync, "record"));
        check(src_feedback = source("feedback_in", npu, "feedback_in"));
        check(src_request = source("draft_request", sync, "draft_request"));
        snk_decision = sink("decision", sync, "decision__valid", nullptr, "decision__payload");
        snk_draft_out = sink("draft_out", npu, "draft_out__valid", "draft_out__ready",
                             "draft_out__payload");
        snk_feedback_out = sink("feedback_out", sync, "feedback_out__valid",
                                "feedback_out__ready", "feedback_out__payload");
        snk_task = sink("task", sync, "task__valid", nullptr, "task__payload");
        check(ahs_sink_ready(h, snk_draft_out, AHS_NEVER, 0, 0, nullptr));
        check(ahs_drive(h, port("task_done"), sync, AHS_ALWAYS, 1.0, 0, nullptr));
        check(ahs_reset(h, sync, 4));
        check(ahs_reset(h, npu, 4));
        check(ahs_step(h, sync, 8));
        ahasd_config_defaults(&cfg);
    }

    // ---- the firmware's bus: AXI4-Lite transfers on the controller's port ----------------
    static int read32(void* ctx, uint32_t addr, uint32_t* value) {
        Loop* l = static_cast<Loop*>(ctx);
        int resp = 0;
        if (ahs_mmio_read(l->h, l->bus, addr, value, &resp, 1000) < 0)
            return std::strncmp(ahs_error(l->h), "timeout", 7) ? AHASD_ERR_BUS : AHASD_ERR_TIMEOUT;
        return resp ? AHASD_ERR_BUS : AHASD_OK;
    }
    static int write32(void* ctx, uint32_t addr, uint32_t value) {
        Loop* l = static_cast<Loop*>(ctx);
        int resp = 0;
        if (ahs_mmio_write(l->h, l->bus, addr, value, 0xF, &resp, 1000) < 0)
            return std::strncmp(ahs_error(l->h), "timeout", 7) ? AHASD_ERR_BUS : AHASD_ERR_TIMEOUT;
        if (l->logging) {
            char line[40];
            std::snprintf(line, sizeof line, "w %X %X", addr, value);
            l->log.push_back(line);
        }
        return resp ? AHASD_ERR_BUS : AHASD_OK;
    }
    static int irq_pending(void* ctx) {
        Loop* l = static_cast<Loop*>(ctx);
        uint32_t w[2] = {0, 0};
        ahs_get(l->h, l->p_irq, w);
        return int(w[0] & 1);
    }

    // ---- the NPU takes the oldest draft batch (one pop, ready high for exactly one item) -----
    void npu_take() {
        check(ahs_sink_ready(h, snk_draft_out, AHS_ALWAYS, 0, 0, nullptr));
        check(ahs_until_count(h, snk_draft_out, ++taken, npu, LIMIT));
        check(ahs_sink_ready(h, snk_draft_out, AHS_NEVER, 0, 0, nullptr));
    }
    uint64_t taken = 0;   // draft batches the NPU has taken
    uint64_t decisions = 0, feedbacks = 0;

    void op(char* line) {
        char* argv[8] = {};
        int argc = 0;
        const char* blank = " \t\r\n";
        for (char* t = std::strtok(line, blank); t && argc < 8; t = std::strtok(nullptr, blank))
            argv[argc++] = t;
        if (!argc) return;
        std::string cmd = argv[0];
        auto hex = [&](int i) { return std::strtoull(argv[i], nullptr, 16); };
        if (cmd == "cfg" && argc == 3) {
            cfg_set(argv[1], std::strtoul(argv[2], nullptr, 10));
        } else if (cmd == "init") {
            ahasd_bus b = {this, read32, write32};
            log.clear();
            logging = true;
            int rc = ahasd_open(&dev, &b);
            if (!rc) rc = ahasd_init(&dev, &cfg);
            logging = false;
            std::printf("init %d\n", rc);
            for (auto& w : log) std::printf("%s\n", w.c_str());
        } else if (cmd == "draft" && argc == 5) {
            set(p_kv, hex(2));
            set(p_now, hex(3));
            set(p_pending, hex(4));
            check(ahs_push(h, src_draft, words(argv[1], ahs_sink_words(h, snk_draft_out)).data()));
            check(ahs_until_count(h, snk_decision, ++decisions, sync, LIMIT));
        } else if ((cmd == "verify" && argc == 2) || cmd == "squash") {
            npu_take();
            if (cmd == "verify") {
                int n = ahs_sink_words(h, snk_feedback_out);
                check(ahs_push(h, src_feedback, words(argv[1], n).data()));
                check(ahs_until_count(h, snk_feedback_out, ++feedbacks, sync, LIMIT));
            }
        } else if (cmd == "request" && argc == 2) {
            uint32_t w[1] = {uint32_t(hex(1))};
            check(ahs_push(h, src_request, w));
        } else if (cmd == "hsquash") {
            uint32_t one[1] = {1};
            check(ahs_lane_pulse(h, ahs_lane_index(h, "feedback_in"), port("squash"), one));
        } else if (cmd == "record" && argc == 4) {
            uint64_t payload = hex(1) | hex(2) << 2 | hex(3) << 34;   // table, cycles, length
            uint32_t w[2] = {uint32_t(payload), uint32_t(payload >> 32)};
            check(ahs_push(h, src_record, w));
        } else if (cmd == "service") {
            settle();
            ahasd_events ev = {0, 0};
            log.clear();
            logging = true;
            int rc = ahasd_run(&dev, irq_pending, this, 8, &ev);
            logging = false;
            std::printf("service %d %X %X\n", rc, ev.pending, ev.actions);
            for (auto& w : log) std::printf("%s\n", w.c_str());
        } else if (cmd == "probe" && argc == 2) {
            uint32_t value = 0;
            int rc = ahasd_read(&dev, uint32_t(hex(1)), &value);
            std::printf("probe %d %X\n", rc, value);
        } else if (cmd == "snap") {
            uint32_t regs[sizeof(ahasd_ctrl_t) / 4];
            int rc = ahasd_wait_quiescent(&dev);
            if (!rc) rc = ahasd_snapshot(&dev, regs, sizeof regs / 4);
            std::printf("snap %d", rc);
            for (uint32_t r : regs) std::printf(" %X", rc ? 0 : r);
            std::printf("\n");
        } else {
            throw Fail("bad scenario line: " + cmd);
        }
    }

    void settle() {
        const char* names[] = {"draft_in", "record", "feedback_in"};
        for (uint64_t cycle = 0;; cycle++) {
            bool empty = true;
            for (const char* n : names) empty = empty && !ahs_lane_pending(h, ahs_lane_index(h, n));
            if (empty) break;
            if (cycle == LIMIT) throw Fail("settle: the PIM/NPU lanes did not drain");
            check(ahs_step(h, sync, 1));
        }
        check(ahs_step(h, sync, SETTLE));
    }

    void cfg_set(const std::string& key, uint32_t v) {
        struct { const char* name; uint32_t* at; } keys[] = {
            {"edc_mode", &cfg.edc_mode}, {"freq_ratio", &cfg.freq_ratio},
            {"nvct", &cfg.preset[0]}, {"pdct", &cfg.preset[1]}, {"pvct", &cfg.preset[2]},
            {"max_len", &cfg.max_len}, {"draft_q", &cfg.threshold[0]},
            {"feedback_q", &cfg.threshold[1]}, {"preverify_q", &cfg.threshold[2]},
            {"draft_mask", &cfg.draft_mask}, {"preverify_mask", &cfg.preverify_mask},
            {"irq_enable", &cfg.irq_enable}, {"poll_limit", &cfg.poll_limit},
            {"tvc_error_limit", &cfg.tvc_error_limit}, {"edc_drop_limit", &cfg.edc_drop_limit}};
        if (key == "tvc_enable") { cfg.tvc_enable = int(v); return; }
        for (auto& k : keys) if (key == k.name) { *k.at = v; return; }
        throw Fail("unknown cfg key " + key);
    }

    void report(const char* kind, int sink) {
        int n = ahs_sink_words(h, sink);
        std::vector<uint64_t> cycle(1);
        std::vector<uint32_t> w(n);
        while (ahs_pop(h, sink, cycle.data(), w.data(), 1)) {
            std::printf("%s", kind);
            for (int i = n - 1; i >= 0; i--) std::printf(i == n - 1 ? " %X" : "%08X", w[i]);
            std::printf("\n");
        }
    }
};

}  // namespace

int main(int argc, char** argv) {
    ahs_design* design = ahs_design_new(argc, argv);
    ahs_harness* h = ahs_create(design);
    int status = 0;
    try {
        Loop loop(h);
        char line[512];
        while (std::fgets(line, sizeof line, stdin)) loop.op(line);
        loop.report("decision", loop.snk_decision);
        loop.report("draft_out", loop.snk_draft_out);
        loop.report("feedback_out", loop.snk_feedback_out);
        loop.report("task", loop.snk_task);
        std::printf(".\n");
    } catch (const Fail& e) {
        std::printf("! %s\n", e.what());
        status = 1;
    }
    ahs_destroy(h);
    return status;
}
