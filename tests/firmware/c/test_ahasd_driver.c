/* Unit tests of the C driver and control loop (firmware/ahasd_driver.c, ahasd_control.c) over a
 * C model of the register file: storage, write-1-to-clear, pulse and read-only fields as
 * hw/regs.rdl defines them (from the generated header), holes answering a bus error, plus
 * faults: a bus that never answers, an error at the N-th access, a TVC that stays busy, an
 * interrupt that cannot be cleared. Run by tests/firmware/test_c_driver.py (with ASan/UBSan). */
#include <stdio.h>
#include <string.h>

#include "ahasd_driver.h"

#define WORDS (sizeof(ahasd_ctrl_t) / 4)

typedef struct {
    uint32_t word[WORDS];
    uint32_t rw[WORDS], w1c[WORDS], pulse[WORDS];
    int present[WORDS];
    unsigned pulses_soft_reset, pulses_clear, pulses_load;
    unsigned accesses, writes;
    int dead;                 /* never answer */
    unsigned fail_at;         /* answer a bus error at this access (1-based); 0: never */
    int busy_forever;         /* TVC_STATUS.busy stays high */
    int sticky_irq;           /* an acknowledged interrupt comes back at once */
} model;

static void reg(model *m, uint32_t addr, uint32_t reset, uint32_t rw, uint32_t w1c,
                uint32_t pulse) {
    m->present[addr / 4] = 1;
    m->word[addr / 4] = reset;
    m->rw[addr / 4] = rw;
    m->w1c[addr / 4] = w1c;
    m->pulse[addr / 4] = pulse;
}

static void model_init(model *m) {
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < WORDS; i++)
        if (ahasd_is_register((uint32_t)(4 * i))) reg(m, (uint32_t)(4 * i), 0, 0, 0, 0);
    reg(m, AHASD_REG(ID), AHASD_CTRL__ID__MAGIC_reset, 0, 0, 0);
    reg(m, AHASD_REG(VERSION), AHASD_PUT(VERSION__MAJOR, AHASD_CTRL__VERSION__MAJOR_reset), 0, 0,
        0);
    reg(m, AHASD_REG(CTRL), AHASD_CTRL__CTRL__ENABLE_reset, AHASD_CTRL__CTRL__ENABLE_bm, 0,
        AHASD_CTRL__CTRL__SOFT_RESET_bm | AHASD_CTRL__CTRL__CLEAR_COUNTERS_bm);
    reg(m, AHASD_REG(INT_STATUS), 0, 0, 0x3F, 0);
    reg(m, AHASD_REG(INT_ENABLE), 0, 0x3F, 0, 0);
    reg(m, AHASD_REG(EDC_CTRL), 0, AHASD_CTRL__EDC_CTRL__MODE_bm, 0, 0);
    reg(m, AHASD_REG(TVC_FREQ_RATIO), AHASD_CTRL__TVC_FREQ_RATIO__RATIO_reset,
        AHASD_CTRL__TVC_FREQ_RATIO__RATIO_bm, 0, 0);
    reg(m, AHASD_REG(TVC_NVCT_PRESET), 0, 0xFFFFFF, 0, 0);
    reg(m, AHASD_REG(TVC_PDCT_PRESET), 0, 0xFFFFFF, 0, 0);
    reg(m, AHASD_REG(TVC_PVCT_PRESET), 0, 0xFFFFFF, 0, 0);
    reg(m, AHASD_REG(TVC_CTRL), AHASD_PUT(TVC_CTRL__MAX_LEN, 8),
        AHASD_CTRL__TVC_CTRL__MAX_LEN_bm | AHASD_CTRL__TVC_CTRL__DISABLE_bm, 0,
        AHASD_CTRL__TVC_CTRL__LOAD_PRESETS_bm);
    reg(m, AHASD_REG(DRAFT_Q.THRESHOLD), 0, 0xFFFF, 0, 0);
    reg(m, AHASD_REG(FEEDBACK_Q.THRESHOLD), 0, 0xFFFF, 0, 0);
    reg(m, AHASD_REG(PREVERIFY_Q.THRESHOLD), 0, 0xFFFF, 0, 0);
    reg(m, AHASD_REG(GTS_DRAFT_MASK), 0x7FFF, 0xFFFF, 0, 0);
    reg(m, AHASD_REG(GTS_PREVERIFY_MASK), 0x8000, 0xFFFF, 0, 0);
    reg(m, AHASD_REG(SCRATCH), 0, 0xFFFFFFFF, 0, 0);
    m->word[AHASD_REG(DRAFT_Q.STATUS) / 4] = AHASD_CTRL__QUEUE_REGS__STATUS__EMPTY_bm;
    m->word[AHASD_REG(FEEDBACK_Q.STATUS) / 4] = AHASD_CTRL__QUEUE_REGS__STATUS__EMPTY_bm;
    m->word[AHASD_REG(PREVERIFY_Q.STATUS) / 4] = AHASD_CTRL__QUEUE_REGS__STATUS__EMPTY_bm;
}

static int access(model *m, uint32_t addr) {
    m->accesses++;
    if (m->dead) return AHASD_ERR_TIMEOUT;
    if (m->fail_at && m->accesses == m->fail_at) return AHASD_ERR_BUS;
    if (addr % 4 || addr / 4 >= WORDS || !m->present[addr / 4]) return AHASD_ERR_BUS;
    return AHASD_OK;
}

static int model_read(void *ctx, uint32_t addr, uint32_t *value) {
    model *m = ctx;
    int rc = access(m, addr);
    if (rc) return rc;
    *value = m->word[addr / 4];
    if (addr == AHASD_REG(TVC_STATUS) && m->busy_forever) *value |= AHASD_CTRL__TVC_STATUS__BUSY_bm;
    return AHASD_OK;
}

static int model_write(void *ctx, uint32_t addr, uint32_t value) {
    model *m = ctx;
    int rc = access(m, addr);
    if (rc) return rc;
    size_t i = addr / 4;
    m->writes++;
    m->word[i] = (m->word[i] & ~m->rw[i]) | (value & m->rw[i]);
    m->word[i] &= ~(value & m->w1c[i]);
    if (addr == AHASD_REG(INT_STATUS) && m->sticky_irq) m->word[i] |= value & m->w1c[i];
    uint32_t p = value & m->pulse[i];
    if (p & AHASD_CTRL__CTRL__SOFT_RESET_bm && addr == AHASD_REG(CTRL)) {
        m->pulses_soft_reset++;
        m->word[AHASD_REG(EDC_DECISIONS) / 4] = 0;
        m->word[AHASD_REG(TVC_ERRORS) / 4] = 0;
    }
    if (p & AHASD_CTRL__CTRL__CLEAR_COUNTERS_bm && addr == AHASD_REG(CTRL)) m->pulses_clear++;
    if (p & AHASD_CTRL__TVC_CTRL__LOAD_PRESETS_bm && addr == AHASD_REG(TVC_CTRL)) m->pulses_load++;
    return AHASD_OK;
}

static int failures;
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } \
    } while (0)
#define REG(m, R) ((m)->word[AHASD_REG(R) / 4])

static ahasd_bus bus_of(model *m) {
    ahasd_bus b = {m, model_read, model_write};
    return b;
}

static void test_open(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    model_init(&m);
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    REG(&m, ID) = 0x12345678;
    CHECK(ahasd_open(&dev, &b) == AHASD_ERR_ID);
    model_init(&m);
    REG(&m, VERSION) = AHASD_PUT(VERSION__MAJOR, AHASD_CTRL__VERSION__MAJOR_reset + 1);
    CHECK(ahasd_open(&dev, &b) == AHASD_ERR_VERSION);
}

static ahasd_config custom(void) {
    ahasd_config c;
    ahasd_config_defaults(&c);
    c.edc_mode = AHASD_CTRL__EDC_CTRL__MODE__NEVER;
    c.freq_ratio = 0x3000;
    c.preset[2] = 0x5000;
    c.max_len = 3;
    c.tvc_enable = 0;
    c.threshold[AHASD_DRAFT_Q] = 6;
    c.threshold[AHASD_PREVERIFY_Q] = 2;
    c.draft_mask = 0x00FF;
    c.preverify_mask = 0xFF00;
    c.irq_enable = AHASD_CTRL__INT_ENABLE__EDC_STOP_bm | AHASD_CTRL__INT_ENABLE__DRAFT_Q_bm;
    return c;
}

static void test_init(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    model_init(&m);
    REG(&m, INT_STATUS) = 0x3F;   /* stale status before init */
    ahasd_config c = custom();
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    CHECK(ahasd_init(&dev, &c) == AHASD_OK);
    CHECK(REG(&m, EDC_CTRL) == AHASD_CTRL__EDC_CTRL__MODE__NEVER);
    CHECK(REG(&m, TVC_FREQ_RATIO) == 0x3000 && REG(&m, TVC_PVCT_PRESET) == 0x5000);
    CHECK(REG(&m, TVC_NVCT_PRESET) == AHASD_CTRL__TVC_NVCT_PRESET__RATIO_reset);
    CHECK(AHASD_GET(TVC_CTRL__MAX_LEN, REG(&m, TVC_CTRL)) == 3);
    CHECK(AHASD_GET(TVC_CTRL__DISABLE, REG(&m, TVC_CTRL)) == 1);
    CHECK(REG(&m, DRAFT_Q.THRESHOLD) == 6 && REG(&m, FEEDBACK_Q.THRESHOLD) == 0 &&
          REG(&m, PREVERIFY_Q.THRESHOLD) == 2);
    CHECK(REG(&m, GTS_DRAFT_MASK) == 0x00FF && REG(&m, GTS_PREVERIFY_MASK) == 0xFF00);
    CHECK(REG(&m, INT_STATUS) == 0 && REG(&m, INT_ENABLE) == c.irq_enable);
    CHECK(REG(&m, CTRL) == AHASD_CTRL__CTRL__ENABLE_bm);
    CHECK(m.pulses_soft_reset == 1 && m.pulses_load == 1 && m.pulses_clear == 1);
    /* Bad configurations are refused before any write. */
    ahasd_config bad[6];
    for (int i = 0; i < 6; i++) bad[i] = custom();
    bad[0].edc_mode = 3;
    bad[1].max_len = 0;
    bad[2].max_len = 16;
    bad[3].draft_mask = 0;
    bad[4].threshold[1] = 0x10000;
    bad[5].irq_enable = 0x40;
    for (int i = 0; i < 6; i++) {
        unsigned before = m.writes;
        CHECK(ahasd_init(&dev, &bad[i]) == AHASD_ERR_ARG);
        CHECK(m.writes == before);
    }
    CHECK(ahasd_set_edc_mode(&dev, 7) == AHASD_ERR_ARG);
}

static void test_dead_bus(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    model_init(&m);
    ahasd_config c = custom();
    ahasd_events ev = {0, 0};
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    m.dead = 1;
    CHECK(ahasd_open(&dev, &b) == AHASD_ERR_TIMEOUT);
    CHECK(ahasd_init(&dev, &c) == AHASD_ERR_TIMEOUT);
    CHECK(ahasd_service(&dev, &ev) == AHASD_ERR_TIMEOUT);
    CHECK(ahasd_wait_quiescent(&dev) == AHASD_ERR_TIMEOUT);
    uint32_t regs[WORDS];
    CHECK(ahasd_snapshot(&dev, regs, WORDS) == AHASD_ERR_TIMEOUT);
}

static void test_stuck_busy(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    model_init(&m);
    ahasd_config c = custom();
    c.poll_limit = 25;
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    m.busy_forever = 1;
    unsigned before = m.accesses;
    CHECK(ahasd_init(&dev, &c) == AHASD_ERR_TIMEOUT);
    /* INT_ENABLE write, CTRL read + write, then exactly poll_limit reads of TVC_STATUS. */
    CHECK(m.accesses - before == 3 + 25);
    CHECK(REG(&m, INT_ENABLE) == 0);   /* left with interrupts off */
}

static void test_error_at_every_access(void) {
    /* A bus error at any access of init is returned, never ignored. */
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    ahasd_config c = custom();
    model_init(&m);
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    unsigned start = m.accesses;
    CHECK(ahasd_init(&dev, &c) == AHASD_OK);
    unsigned total = m.accesses - start;
    CHECK(total > 10);
    for (unsigned n = 1; n <= total; n++) {
        model_init(&m);
        CHECK(ahasd_open(&dev, &b) == AHASD_OK);
        m.fail_at = m.accesses + n;
        CHECK(ahasd_init(&dev, &c) == AHASD_ERR_BUS);
    }
}

static void test_service(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    ahasd_config c;
    ahasd_events ev = {0, 0};
    model_init(&m);
    ahasd_config_defaults(&c);
    c.tvc_error_limit = 3;
    c.edc_drop_limit = 2;
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    CHECK(ahasd_init(&dev, &c) == AHASD_OK);
    CHECK(ahasd_service(&dev, &ev) == AHASD_OK && ev.pending == 0 && ev.actions == 0);
    REG(&m, INT_STATUS) = AHASD_CTRL__INT_STATUS__EDC_STOP_bm |
                          AHASD_CTRL__INT_STATUS__TVC_INSERT_bm |
                          AHASD_CTRL__INT_STATUS__FEEDBACK_Q_bm;
    REG(&m, EDC_STATUS) = 0x0203;
    REG(&m, TVC_STATUS) = 5;
    REG(&m, FEEDBACK_Q.STATUS) = 4;
    REG(&m, DRAFT_Q.PUSHBACKS) = 7;
    CHECK(ahasd_service(&dev, &ev) == AHASD_OK);
    CHECK(REG(&m, INT_STATUS) == 0);
    CHECK(ev.actions == (AHASD_ACT_EDC_STOP | AHASD_ACT_TVC_INSERT |
                         (AHASD_ACT_QUEUE << AHASD_FEEDBACK_Q) |
                         (AHASD_ACT_PUSHBACK << AHASD_DRAFT_Q)));
    CHECK(dev.edc_stops == 1 && dev.tvc_inserts == 1 && dev.edc_status == 0x0203 &&
          dev.tvc_status == 5 && dev.queue[AHASD_FEEDBACK_Q].status == 4 &&
          dev.queue[AHASD_FEEDBACK_Q].crossings == 1 && dev.interrupts == 1);
    /* Disabled interrupts stay set (not acknowledged). */
    CHECK(ahasd_write(&dev, AHASD_REG(INT_ENABLE), 0) == AHASD_OK);
    dev.cfg.irq_enable = 0;
    REG(&m, INT_STATUS) = AHASD_CTRL__INT_STATUS__EDC_STOP_bm;
    ev.pending = ev.actions = 0;
    CHECK(ahasd_service(&dev, &ev) == AHASD_OK && ev.pending == 0);
    CHECK(REG(&m, INT_STATUS) == AHASD_CTRL__INT_STATUS__EDC_STOP_bm);
    /* TVC record errors: seen without an interrupt; the limit disables TVC once. */
    REG(&m, TVC_ERRORS) = 2;
    CHECK(ahasd_service(&dev, &ev) == AHASD_OK && (ev.actions & AHASD_ACT_TVC_ERROR));
    REG(&m, TVC_ERRORS) = 3;
    CHECK(ahasd_service(&dev, &ev) == AHASD_ERR_TVC_RECORD);
    CHECK(AHASD_GET(TVC_CTRL__DISABLE, REG(&m, TVC_CTRL)) == 1 && dev.tvc_disabled);
    CHECK(AHASD_GET(TVC_CTRL__MAX_LEN, REG(&m, TVC_CTRL)) == 8);   /* RMW kept max_len */
    CHECK(ahasd_service(&dev, &ev) == AHASD_OK);
    /* EDC FIFO drops: the limit switches EDC to ALWAYS. */
    ev.actions = 0;
    REG(&m, EDC_FIFO_DROPS) = 1;
    CHECK(ahasd_service(&dev, &ev) == AHASD_OK && ev.actions == AHASD_ACT_EDC_DROP);
    REG(&m, EDC_FIFO_DROPS) = 2;
    CHECK(ahasd_service(&dev, &ev) == AHASD_ERR_EDC_DROPS);
    CHECK(REG(&m, EDC_CTRL) == AHASD_CTRL__EDC_CTRL__MODE__ALWAYS);
    CHECK(ev.actions & AHASD_ACT_EDC_ALWAYS);
}

static int irq_of(void *ctx) {
    model *m = ctx;
    return (REG(m, INT_STATUS) & REG(m, INT_ENABLE)) != 0;
}

static void test_run(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    ahasd_config c;
    ahasd_events ev = {0, 0};
    model_init(&m);
    ahasd_config_defaults(&c);
    CHECK(ahasd_open(&dev, &b) == AHASD_OK && ahasd_init(&dev, &c) == AHASD_OK);
    REG(&m, INT_STATUS) = AHASD_CTRL__INT_STATUS__TVC_ERROR_bm;
    CHECK(ahasd_run(&dev, irq_of, &m, 4, &ev) == AHASD_OK);
    CHECK(ev.pending == AHASD_CTRL__INT_STATUS__TVC_ERROR_bm && !irq_of(&m));
    /* An interrupt that comes straight back: bounded, a timeout after max_passes. */
    m.sticky_irq = 1;
    REG(&m, INT_STATUS) = AHASD_CTRL__INT_STATUS__DRAFT_Q_bm;
    unsigned before = dev.interrupts;
    CHECK(ahasd_run(&dev, irq_of, &m, 4, &ev) == AHASD_ERR_TIMEOUT);
    CHECK(dev.interrupts - before == 4);
    /* A limit action (AHASD_ERR_TVC_RECORD) does not end the run: the passes go on and the
       status is returned at the end (a timeout wins while the interrupt comes back). */
    for (int sticky = 0; sticky < 2; sticky++) {
        model_init(&m);
        m.sticky_irq = sticky;
        c.tvc_error_limit = 1;
        CHECK(ahasd_open(&dev, &b) == AHASD_OK && ahasd_init(&dev, &c) == AHASD_OK);
        REG(&m, TVC_ERRORS) = 1;
        REG(&m, INT_STATUS) = AHASD_CTRL__INT_STATUS__TVC_ERROR_bm;
        before = dev.interrupts;
        CHECK(ahasd_run(&dev, irq_of, &m, 3, &ev) ==
              (sticky ? AHASD_ERR_TIMEOUT : AHASD_ERR_TVC_RECORD));
        CHECK(dev.tvc_disabled && dev.interrupts - before == (sticky ? 3u : 1u));
    }
}

/* Every field of the defaults is set (none left over from the caller) and each TVC preset
   goes to its own table; the Python side compares the printed values with the register map. */
static void test_config_defaults(void) {
    ahasd_config c;
    memset(&c, 0xA5, sizeof c);
    ahasd_config_defaults(&c);
    CHECK(c.preset[0] == AHASD_CTRL__TVC_NVCT_PRESET__RATIO_reset);
    CHECK(c.preset[1] == AHASD_CTRL__TVC_PDCT_PRESET__RATIO_reset);
    CHECK(c.preset[2] == AHASD_CTRL__TVC_PVCT_PRESET__RATIO_reset);
    printf("defaults edc_mode=%u freq_ratio=%u nvct=%u pdct=%u pvct=%u max_len=%u tvc_enable=%d"
           " draft_mask=%u preverify_mask=%u", (unsigned)c.edc_mode, (unsigned)c.freq_ratio,
           (unsigned)c.preset[0], (unsigned)c.preset[1], (unsigned)c.preset[2],
           (unsigned)c.max_len, c.tvc_enable, (unsigned)c.draft_mask,
           (unsigned)c.preverify_mask);
    for (int q = 0; q < AHASD_QUEUES; q++) printf(" threshold%d=%u", q, (unsigned)c.threshold[q]);
    printf("\n");
}

static void test_snapshot_and_quiescent(void) {
    model m;
    ahasd_dev dev;
    ahasd_bus b = bus_of(&m);
    uint32_t regs[WORDS];
    model_init(&m);
    CHECK(ahasd_open(&dev, &b) == AHASD_OK);
    REG(&m, SCRATCH) = 0xCAFE;
    CHECK(ahasd_snapshot(&dev, regs, WORDS - 1) == AHASD_ERR_ARG);
    CHECK(ahasd_snapshot(&dev, regs, WORDS) == AHASD_OK);
    CHECK(regs[AHASD_REG(SCRATCH) / 4] == 0xCAFE);
    CHECK(regs[AHASD_REG(ID) / 4] == AHASD_CTRL__ID__MAGIC_reset);
    CHECK(regs[0x3C / 4] == 0);   /* a hole */
    unsigned n = 0;
    for (size_t i = 0; i < WORDS; i++) n += (unsigned)ahasd_is_register((uint32_t)(4 * i));
    CHECK(n == 51);
    CHECK(ahasd_read(&dev, 0x3C, &regs[0]) == AHASD_ERR_BUS);
    CHECK(ahasd_wait_quiescent(&dev) == AHASD_OK);
    REG(&m, PREVERIFY_Q.STATUS) = 1;
    CHECK(ahasd_wait_quiescent(&dev) == AHASD_ERR_TIMEOUT);
    for (int s = 0; s >= -8; s--) CHECK(strcmp(ahasd_strerror(s), "unknown status") != 0);
    CHECK(strcmp(ahasd_strerror(-9), "unknown status") == 0);
    /* GTS status: decoded through the enumeration; a value outside it is refused. */
    REG(&m, PREVERIFY_Q.STATUS) = AHASD_CTRL__QUEUE_REGS__STATUS__EMPTY_bm;
    ahasd_gts_info gts;
    REG(&m, GTS_STATUS) = AHASD_PUT(GTS_STATUS__STATE, AHASD_CTRL__GTS_STATUS__STATE__PREVERIFY) |
                          AHASD_CTRL__GTS_STATUS__DRAFT_ALLOWED_bm |
                          AHASD_PUT(GTS_STATUS__RANK_ENABLE, 0x8000);
    CHECK(ahasd_gts_status(&dev, &gts) == AHASD_OK);
    CHECK(gts.state == AHASD_CTRL__GTS_STATUS__STATE__PREVERIFY && gts.draft_allowed == 1 &&
          gts.switching == 0 && gts.rank_enable == 0x8000);
    CHECK(ahasd_wait_quiescent(&dev) == AHASD_ERR_TIMEOUT);   /* GTS still running a task */
    REG(&m, GTS_STATUS) = AHASD_PUT(GTS_STATUS__STATE, 3);
    CHECK(ahasd_gts_status(&dev, &gts) == AHASD_ERR_STATE);
}

int main(void) {
    test_open();
    test_init();
    test_dead_bus();
    test_stuck_busy();
    test_error_at_every_access();
    test_service();
    test_run();
    test_snapshot_and_quiescent();
    printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
    test_config_defaults();
    /* The enumerations, for the Python side to compare with its own. */
    printf("enum EDC_MODE PREDICT=%d ALWAYS=%d NEVER=%d\n", AHASD_CTRL__EDC_CTRL__MODE__PREDICT,
           AHASD_CTRL__EDC_CTRL__MODE__ALWAYS, AHASD_CTRL__EDC_CTRL__MODE__NEVER);
    printf("enum GTS_STATE IDLE=%d DRAFT=%d PREVERIFY=%d\n", AHASD_CTRL__GTS_STATUS__STATE__IDLE,
           AHASD_CTRL__GTS_STATUS__STATE__DRAFT, AHASD_CTRL__GTS_STATUS__STATE__PREVERIFY);
    printf("registers");
    for (size_t i = 0; i < WORDS; i++)
        if (ahasd_is_register((uint32_t)(4 * i))) printf(" %zu", 4 * i);
    printf("\n");
    return failures != 0;
}
