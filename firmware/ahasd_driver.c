/* AHASD controller driver: bus access, bounded polls, initialisation (see ahasd_driver.h). */
#include "ahasd_driver.h"

/* The register words of the map, in address order (the holes of ahasd_ctrl_t left out). */
static const uint32_t registers[] = {
    AHASD_REG(ID), AHASD_REG(VERSION), AHASD_REG(CTRL), AHASD_REG(PARAMS),
    AHASD_REG(INT_STATUS), AHASD_REG(INT_ENABLE), AHASD_REG(INT_RAW), AHASD_REG(INT_COUNT),
    AHASD_REG(EDC_CTRL), AHASD_REG(EDC_STATUS), AHASD_REG(EDC_DECISIONS),
    AHASD_REG(EDC_SUPPRESSED), AHASD_REG(EDC_VERIFICATIONS), AHASD_REG(EDC_SQUASHES),
    AHASD_REG(EDC_FIFO_DROPS), AHASD_REG(TVC_FREQ_RATIO), AHASD_REG(TVC_NVCT_PRESET),
    AHASD_REG(TVC_PDCT_PRESET), AHASD_REG(TVC_PVCT_PRESET), AHASD_REG(TVC_CTRL),
    AHASD_REG(TVC_DECISIONS), AHASD_REG(TVC_INSERTS), AHASD_REG(TVC_ERRORS),
    AHASD_REG(TVC_STATUS), AHASD_REG(TVC_NVCT_AVG), AHASD_REG(TVC_PDCT_AVG),
    AHASD_REG(TVC_PVCT_AVG),
    AHASD_REG(DRAFT_Q.STATUS), AHASD_REG(DRAFT_Q.THRESHOLD), AHASD_REG(DRAFT_Q.PUSHES),
    AHASD_REG(DRAFT_Q.POPS), AHASD_REG(DRAFT_Q.PUSHBACKS), AHASD_REG(SQUASHES),
    AHASD_REG(SQUASH_DISCARDED),
    AHASD_REG(FEEDBACK_Q.STATUS), AHASD_REG(FEEDBACK_Q.THRESHOLD), AHASD_REG(FEEDBACK_Q.PUSHES),
    AHASD_REG(FEEDBACK_Q.POPS), AHASD_REG(FEEDBACK_Q.PUSHBACKS),
    AHASD_REG(PREVERIFY_Q.STATUS), AHASD_REG(PREVERIFY_Q.THRESHOLD),
    AHASD_REG(PREVERIFY_Q.PUSHES), AHASD_REG(PREVERIFY_Q.POPS), AHASD_REG(PREVERIFY_Q.PUSHBACKS),
    AHASD_REG(GTS_STATUS), AHASD_REG(GTS_SWITCHES), AHASD_REG(GTS_DRAFT_MASK),
    AHASD_REG(GTS_PREVERIFY_MASK), AHASD_REG(GTS_BUSY), AHASD_REG(GTS_STALLS),
    AHASD_REG(SCRATCH),
};

const char *ahasd_strerror(int status) {
    switch (status) {
    case AHASD_OK: return "ok";
    case AHASD_ERR_BUS: return "bus error response";
    case AHASD_ERR_TIMEOUT: return "timeout (no bus answer or a poll did not settle)";
    case AHASD_ERR_ID: return "ID is not 'AHSD'";
    case AHASD_ERR_VERSION: return "register map major version mismatch";
    case AHASD_ERR_ARG: return "argument out of range";
    case AHASD_ERR_TVC_RECORD: return "TVC record errors reached the limit (TVC disabled)";
    case AHASD_ERR_EDC_DROPS: return "EDC FIFO drops reached the limit (EDC mode ALWAYS)";
    case AHASD_ERR_STATE: return "a status field holds a value outside its enumeration";
    default: return "unknown status";
    }
}

int ahasd_is_register(uint32_t addr) {
    for (size_t i = 0; i < sizeof registers / sizeof registers[0]; i++)
        if (registers[i] == addr) return 1;
    return 0;
}

void ahasd_config_defaults(ahasd_config *cfg) {
    cfg->edc_mode = AHASD_CTRL__EDC_CTRL__MODE_reset;
    cfg->freq_ratio = AHASD_CTRL__TVC_FREQ_RATIO__RATIO_reset;
    cfg->preset[0] = AHASD_CTRL__TVC_NVCT_PRESET__RATIO_reset;
    cfg->preset[1] = AHASD_CTRL__TVC_PDCT_PRESET__RATIO_reset;
    cfg->preset[2] = AHASD_CTRL__TVC_PVCT_PRESET__RATIO_reset;
    cfg->max_len = AHASD_CTRL__TVC_CTRL__MAX_LEN_reset;
    cfg->tvc_enable = !AHASD_CTRL__TVC_CTRL__DISABLE_reset;
    for (int q = 0; q < AHASD_QUEUES; q++)
        cfg->threshold[q] = AHASD_CTRL__QUEUE_REGS__THRESHOLD__THRESHOLD_reset;
    cfg->draft_mask = AHASD_CTRL__GTS_DRAFT_MASK__MASK_reset;
    cfg->preverify_mask = AHASD_CTRL__GTS_PREVERIFY_MASK__MASK_reset;
    cfg->irq_enable = AHASD_CTRL__INT_ENABLE__DRAFT_Q_bm | AHASD_CTRL__INT_ENABLE__FEEDBACK_Q_bm |
                      AHASD_CTRL__INT_ENABLE__PREVERIFY_Q_bm | AHASD_CTRL__INT_ENABLE__EDC_STOP_bm |
                      AHASD_CTRL__INT_ENABLE__TVC_INSERT_bm | AHASD_CTRL__INT_ENABLE__TVC_ERROR_bm;
    cfg->poll_limit = 1000;
    cfg->tvc_error_limit = 0;
    cfg->edc_drop_limit = 0;
}

int ahasd_read(ahasd_dev *dev, uint32_t addr, uint32_t *value) {
    return dev->bus.read32(dev->bus.ctx, addr, value);
}

int ahasd_write(ahasd_dev *dev, uint32_t addr, uint32_t value) {
    return dev->bus.write32(dev->bus.ctx, addr, value);
}

int ahasd_modify(ahasd_dev *dev, uint32_t addr, uint32_t mask, uint32_t bits) {
    uint32_t word;
    int rc = ahasd_read(dev, addr, &word);
    if (rc) return rc;
    return ahasd_write(dev, addr, (word & ~mask) | (bits & mask));
}

int ahasd_poll(ahasd_dev *dev, uint32_t addr, uint32_t mask, uint32_t want, uint32_t *seen) {
    uint32_t word = 0;
    for (uint32_t i = 0; i < dev->cfg.poll_limit; i++) {
        int rc = ahasd_read(dev, addr, &word);
        if (seen) *seen = word;
        if (rc) return rc;
        if ((word & mask) == want) return AHASD_OK;
    }
    return AHASD_ERR_TIMEOUT;
}

/* Field by field: a struct assignment may become a memcpy call, which a freestanding build
 * does not have. */
static void copy_config(ahasd_config *to, const ahasd_config *from) {
    to->edc_mode = from->edc_mode;
    to->freq_ratio = from->freq_ratio;
    for (int t = 0; t < 3; t++) to->preset[t] = from->preset[t];
    to->max_len = from->max_len;
    to->tvc_enable = from->tvc_enable;
    for (int q = 0; q < AHASD_QUEUES; q++) to->threshold[q] = from->threshold[q];
    to->draft_mask = from->draft_mask;
    to->preverify_mask = from->preverify_mask;
    to->irq_enable = from->irq_enable;
    to->poll_limit = from->poll_limit;
    to->tvc_error_limit = from->tvc_error_limit;
    to->edc_drop_limit = from->edc_drop_limit;
}

int ahasd_open(ahasd_dev *dev, const ahasd_bus *bus) {
    uint32_t word;
    int rc;
    dev->bus.ctx = bus->ctx;
    dev->bus.read32 = bus->read32;
    dev->bus.write32 = bus->write32;
    ahasd_config_defaults(&dev->cfg);
    dev->edc_stops = dev->tvc_inserts = dev->interrupts = 0;
    dev->edc_status = dev->tvc_status = dev->tvc_errors = dev->edc_drops = 0;
    for (int q = 0; q < AHASD_QUEUES; q++)
        dev->queue[q].status = dev->queue[q].pushbacks = dev->queue[q].crossings = 0;
    dev->tvc_disabled = dev->edc_fallback = 0;
    if ((rc = ahasd_read(dev, AHASD_REG(ID), &word))) return rc;
    if (word != AHASD_CTRL__ID__MAGIC_reset) return AHASD_ERR_ID;
    if ((rc = ahasd_read(dev, AHASD_REG(VERSION), &word))) return rc;
    if (AHASD_GET(VERSION__MAJOR, word) != AHASD_CTRL__VERSION__MAJOR_reset)
        return AHASD_ERR_VERSION;
    return AHASD_OK;
}

static int tvc_idle(ahasd_dev *dev) {
    return ahasd_poll(dev, AHASD_REG(TVC_STATUS), AHASD_CTRL__TVC_STATUS__BUSY_bm, 0, NULL);
}

int ahasd_soft_reset(ahasd_dev *dev) {
    int rc = ahasd_modify(dev, AHASD_REG(CTRL), AHASD_CTRL__CTRL__SOFT_RESET_bm,
                          AHASD_CTRL__CTRL__SOFT_RESET_bm);
    return rc ? rc : tvc_idle(dev);
}

int ahasd_clear_counters(ahasd_dev *dev) {
    return ahasd_modify(dev, AHASD_REG(CTRL), AHASD_CTRL__CTRL__CLEAR_COUNTERS_bm,
                        AHASD_CTRL__CTRL__CLEAR_COUNTERS_bm);
}

int ahasd_enable(ahasd_dev *dev, int on) {
    return ahasd_modify(dev, AHASD_REG(CTRL), AHASD_CTRL__CTRL__ENABLE_bm,
                        on ? AHASD_CTRL__CTRL__ENABLE_bm : 0);
}

static int edc_mode_ok(uint32_t mode) {
    return mode == AHASD_CTRL__EDC_CTRL__MODE__PREDICT ||
           mode == AHASD_CTRL__EDC_CTRL__MODE__ALWAYS ||
           mode == AHASD_CTRL__EDC_CTRL__MODE__NEVER;
}

int ahasd_set_edc_mode(ahasd_dev *dev, uint32_t mode) {
    if (!edc_mode_ok(mode)) return AHASD_ERR_ARG;
    return ahasd_modify(dev, AHASD_REG(EDC_CTRL), AHASD_CTRL__EDC_CTRL__MODE_bm,
                        AHASD_PUT(EDC_CTRL__MODE, mode));
}

#define FITS(value, FIELD) \
    ((uint32_t)(value) <= (AHASD_CTRL__##FIELD##_bm >> AHASD_CTRL__##FIELD##_bp))

static int config_ok(const ahasd_config *c) {
    int ok = edc_mode_ok(c->edc_mode) && FITS(c->freq_ratio, TVC_FREQ_RATIO__RATIO) &&
             c->max_len >= 1 && FITS(c->max_len, TVC_CTRL__MAX_LEN) &&
             c->draft_mask != 0 && FITS(c->draft_mask, GTS_DRAFT_MASK__MASK) &&
             c->preverify_mask != 0 && FITS(c->preverify_mask, GTS_PREVERIFY_MASK__MASK) &&
             (c->irq_enable & ~(uint32_t)(AHASD_CTRL__INT_ENABLE__DRAFT_Q_bm |
                                          AHASD_CTRL__INT_ENABLE__FEEDBACK_Q_bm |
                                          AHASD_CTRL__INT_ENABLE__PREVERIFY_Q_bm |
                                          AHASD_CTRL__INT_ENABLE__EDC_STOP_bm |
                                          AHASD_CTRL__INT_ENABLE__TVC_INSERT_bm |
                                          AHASD_CTRL__INT_ENABLE__TVC_ERROR_bm)) == 0 &&
             c->poll_limit >= 1;
    for (int t = 0; t < 3; t++) ok = ok && FITS(c->preset[t], TVC_NVCT_PRESET__RATIO);
    for (int q = 0; q < AHASD_QUEUES; q++)
        ok = ok && FITS(c->threshold[q], QUEUE_REGS__THRESHOLD__THRESHOLD);
    return ok;
}

static const uint32_t queue_base[AHASD_QUEUES] = {
    AHASD_REG(DRAFT_Q), AHASD_REG(FEEDBACK_Q), AHASD_REG(PREVERIFY_Q)};

#define QREG(q, REG) (queue_base[q] + (uint32_t)offsetof(ahasd_ctrl__queue_regs_t, REG))

int ahasd_init(ahasd_dev *dev, const ahasd_config *cfg) {
    int rc;
    if (!config_ok(cfg)) return AHASD_ERR_ARG;
    copy_config(&dev->cfg, cfg);
    /* Interrupts off first, so no handler runs on a half-programmed device. */
    if ((rc = ahasd_write(dev, AHASD_REG(INT_ENABLE), 0))) return rc;
    if ((rc = ahasd_soft_reset(dev))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(TVC_FREQ_RATIO), cfg->freq_ratio))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(TVC_NVCT_PRESET), cfg->preset[0]))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(TVC_PDCT_PRESET), cfg->preset[1]))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(TVC_PVCT_PRESET), cfg->preset[2]))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(TVC_CTRL),
                          AHASD_PUT(TVC_CTRL__MAX_LEN, cfg->max_len) |
                          AHASD_PUT(TVC_CTRL__DISABLE, !cfg->tvc_enable) |
                          AHASD_PUT(TVC_CTRL__LOAD_PRESETS, 1)))) return rc;
    if ((rc = tvc_idle(dev))) return rc;
    if ((rc = ahasd_set_edc_mode(dev, cfg->edc_mode))) return rc;
    for (int q = 0; q < AHASD_QUEUES; q++)
        if ((rc = ahasd_write(dev, QREG(q, THRESHOLD), cfg->threshold[q]))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(GTS_DRAFT_MASK), cfg->draft_mask))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(GTS_PREVERIFY_MASK), cfg->preverify_mask))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(CTRL), AHASD_CTRL__CTRL__ENABLE_bm |
                          AHASD_CTRL__CTRL__CLEAR_COUNTERS_bm))) return rc;
    /* Stale status from before the reset: clear every bit (W1C), then enable. */
    if ((rc = ahasd_write(dev, AHASD_REG(INT_STATUS), 0xFFFFFFFFu))) return rc;
    if ((rc = ahasd_write(dev, AHASD_REG(INT_ENABLE), cfg->irq_enable))) return rc;
    dev->edc_stops = dev->tvc_inserts = dev->interrupts = 0;
    dev->tvc_errors = dev->edc_drops = 0;
    dev->tvc_disabled = dev->edc_fallback = 0;
    for (int q = 0; q < AHASD_QUEUES; q++)
        dev->queue[q].status = dev->queue[q].pushbacks = dev->queue[q].crossings = 0;
    return AHASD_OK;
}

int ahasd_wait_quiescent(ahasd_dev *dev) {
    int rc;
    for (int q = 0; q < AHASD_QUEUES; q++) {
        rc = ahasd_poll(dev, QREG(q, STATUS), AHASD_CTRL__QUEUE_REGS__STATUS__EMPTY_bm,
                        AHASD_CTRL__QUEUE_REGS__STATUS__EMPTY_bm, NULL);
        if (rc) return rc;
    }
    rc = ahasd_poll(dev, AHASD_REG(TVC_STATUS),
                    AHASD_CTRL__TVC_STATUS__DECIDING_bm | AHASD_CTRL__TVC_STATUS__BUSY_bm, 0, NULL);
    if (rc) return rc;
    return ahasd_poll(dev, AHASD_REG(GTS_STATUS), AHASD_CTRL__GTS_STATUS__STATE_bm,
                      AHASD_PUT(GTS_STATUS__STATE, AHASD_CTRL__GTS_STATUS__STATE__IDLE), NULL);
}

int ahasd_gts_status(ahasd_dev *dev, ahasd_gts_info *info) {
    uint32_t word;
    int rc = ahasd_read(dev, AHASD_REG(GTS_STATUS), &word);
    if (rc) return rc;
    info->state = AHASD_GET(GTS_STATUS__STATE, word);
    info->switching = AHASD_GET(GTS_STATUS__SWITCHING, word);
    info->draft_allowed = AHASD_GET(GTS_STATUS__DRAFT_ALLOWED, word);
    info->rank_enable = AHASD_GET(GTS_STATUS__RANK_ENABLE, word);
    switch (info->state) {
    case AHASD_CTRL__GTS_STATUS__STATE__IDLE:
    case AHASD_CTRL__GTS_STATUS__STATE__DRAFT:
    case AHASD_CTRL__GTS_STATUS__STATE__PREVERIFY: return AHASD_OK;
    default: return AHASD_ERR_STATE;
    }
}

int ahasd_snapshot(ahasd_dev *dev, uint32_t *regs, size_t n_words) {
    if (n_words < sizeof(ahasd_ctrl_t) / 4) return AHASD_ERR_ARG;
    for (size_t i = 0; i < sizeof(ahasd_ctrl_t) / 4; i++) regs[i] = 0;
    for (size_t i = 0; i < sizeof registers / sizeof registers[0]; i++) {
        int rc = ahasd_read(dev, registers[i], &regs[registers[i] / 4]);
        if (rc) return rc;
    }
    return AHASD_OK;
}
