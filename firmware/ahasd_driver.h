/* AHASD controller driver and host control loop (C11, freestanding-friendly).
 *
 * The host's job is the control plane: descriptors travel on the hardware streams, so the
 * firmware configures EDC, TVC, the queue thresholds, the GTS rank masks and the interrupts, and
 * then services interrupts and watches the counters (see ahasd_service below for the reaction to
 * each event). Addresses, field positions and resets come from the generated ahasd_regs.h
 * (hw/regs.rdl, `ahasd regs generate`); the driver holds no register numbers of its own.
 *
 * Every register access goes through an ahasd_bus whose read32 / write32 may fail (a bus error
 * response or no answer); every function returns an ahasd_status (AHASD_OK = 0, errors < 0) and
 * every poll is bounded by ahasd_config.poll_limit, so a device that never answers or never
 * settles gives AHASD_ERR_TIMEOUT, never a hang. No libc calls: it builds freestanding.
 */
#ifndef AHASD_DRIVER_H
#define AHASD_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "ahasd_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- enumerated field values -------------------------------------------------------------
 * EDC_CTRL.mode (edc_mode_e) and GTS_STATUS.state (gts_state_e) are SystemRDL enums in
 * hw/regs.rdl; the generated header defines AHASD_CTRL__EDC_CTRL__MODE__<MEMBER> and
 * AHASD_CTRL__GTS_STATUS__STATE__<MEMBER>. Nothing here repeats their values. */
#if !defined(AHASD_CTRL__EDC_CTRL__MODE__PREDICT) || !defined(AHASD_CTRL__GTS_STATUS__STATE__IDLE)
#error "ahasd_regs.h is stale: regenerate it with `ahasd regs generate`"
#endif

/* Byte address of register REG (a member of ahasd_ctrl_t, e.g. DRAFT_Q.STATUS). */
#define AHASD_REG(REG) ((uint32_t)offsetof(ahasd_ctrl_t, REG))
/* Extract / place field FIELD (e.g. TVC_CTRL__MAX_LEN) of a register word. */
#define AHASD_GET(FIELD, word) \
    (((uint32_t)(word) & AHASD_CTRL__##FIELD##_bm) >> AHASD_CTRL__##FIELD##_bp)
#define AHASD_PUT(FIELD, value) \
    (((uint32_t)(value) << AHASD_CTRL__##FIELD##_bp) & AHASD_CTRL__##FIELD##_bm)

/* ---- status codes ------------------------------------------------------------------------ */
typedef enum {
    AHASD_OK = 0,
    AHASD_ERR_BUS = -1,        /* the bus answered SLVERR / DECERR */
    AHASD_ERR_TIMEOUT = -2,    /* the bus did not answer, or a poll did not settle in time */
    AHASD_ERR_ID = -3,         /* ID does not read 'AHSD' */
    AHASD_ERR_VERSION = -4,    /* register-map major version differs from this driver's */
    AHASD_ERR_ARG = -5,        /* an argument out of range (nothing was written) */
    AHASD_ERR_TVC_RECORD = -6, /* TVC record errors reached the limit: TVC was disabled */
    AHASD_ERR_EDC_DROPS = -7,  /* EDC FIFO drops reached the limit: EDC mode set to ALWAYS */
    AHASD_ERR_STATE = -8       /* a status field read a value outside its enumeration */
} ahasd_status;

const char *ahasd_strerror(int status);

/* ---- the bus ----------------------------------------------------------------------------- */
typedef struct {
    void *ctx;
    /* Return AHASD_OK, AHASD_ERR_BUS (error response) or AHASD_ERR_TIMEOUT (no answer). */
    int (*read32)(void *ctx, uint32_t addr, uint32_t *value);
    int (*write32)(void *ctx, uint32_t addr, uint32_t value);
} ahasd_bus;

/* ---- configuration ----------------------------------------------------------------------- */
enum { AHASD_DRAFT_Q = 0, AHASD_FEEDBACK_Q = 1, AHASD_PREVERIFY_Q = 2, AHASD_QUEUES = 3 };

typedef struct {
    uint32_t edc_mode;           /* AHASD_CTRL__EDC_CTRL__MODE__* */
    uint32_t freq_ratio;         /* TVC f_PIM / f_NPU, UQ2.14 */
    uint32_t preset[3];          /* TVC NVCT, PDCT, PVCT presets, UQ16.8 */
    uint32_t max_len;            /* largest pre-verify length, 1..15 */
    int tvc_enable;
    uint32_t threshold[AHASD_QUEUES]; /* queue fill raising its interrupt; 0: never */
    uint32_t draft_mask;         /* GTS rank masks, non-zero */
    uint32_t preverify_mask;
    uint32_t irq_enable;         /* INT_ENABLE bits (AHASD_CTRL__INT_ENABLE__*_bm) */
    uint32_t poll_limit;         /* reads before a poll gives AHASD_ERR_TIMEOUT, >= 1 */
    uint32_t tvc_error_limit;    /* TVC record errors that disable TVC; 0: no limit */
    uint32_t edc_drop_limit;     /* EDC FIFO drops that switch EDC to ALWAYS; 0: no limit */
} ahasd_config;

/* The register map's reset values, every interrupt enabled, poll_limit 1000, no limits. */
void ahasd_config_defaults(ahasd_config *cfg);

/* ---- the device -------------------------------------------------------------------------- */
typedef struct {
    uint32_t status, pushbacks; /* QUEUE STATUS word and PUSHBACKS counter when last seen */
    uint32_t crossings;         /* threshold interrupts serviced */
} ahasd_queue_seen;

typedef struct {
    ahasd_bus bus;
    ahasd_config cfg;
    /* What the control loop has seen since ahasd_init (the counters' last values are kept so
     * that increases are noticed even when no interrupt is enabled for them). */
    uint32_t edc_stops, tvc_inserts, interrupts;
    uint32_t edc_status, tvc_status; /* last EDC_STATUS / TVC_STATUS read by a handler */
    uint32_t tvc_errors, edc_drops;  /* last TVC_ERRORS / EDC_FIFO_DROPS read */
    ahasd_queue_seen queue[AHASD_QUEUES];
    int tvc_disabled, edc_fallback;  /* a limit action was taken */
} ahasd_dev;

/* Bind dev to bus, check ID and VERSION. */
int ahasd_open(ahasd_dev *dev, const ahasd_bus *bus);
/* Validate cfg, soft-reset, program TVC (presets loaded, then polled until TVC is idle), EDC
 * mode, thresholds, masks; clear counters and stale interrupts; enable cfg->irq_enable. */
int ahasd_init(ahasd_dev *dev, const ahasd_config *cfg);

/* Raw access (addresses from AHASD_REG). */
int ahasd_read(ahasd_dev *dev, uint32_t addr, uint32_t *value);
int ahasd_write(ahasd_dev *dev, uint32_t addr, uint32_t value);
/* Read-modify-write of the bits in mask (pulse fields read 0, so RMW never re-fires them). */
int ahasd_modify(ahasd_dev *dev, uint32_t addr, uint32_t mask, uint32_t bits);
/* Read addr until (value & mask) == want, at most cfg.poll_limit reads; last value to *seen. */
int ahasd_poll(ahasd_dev *dev, uint32_t addr, uint32_t mask, uint32_t want, uint32_t *seen);

int ahasd_soft_reset(ahasd_dev *dev);     /* and wait for TVC to reload its presets */
int ahasd_clear_counters(ahasd_dev *dev);
int ahasd_set_edc_mode(ahasd_dev *dev, uint32_t mode);
int ahasd_enable(ahasd_dev *dev, int on);
/* GTS_STATUS decoded; state is one of AHASD_CTRL__GTS_STATUS__STATE__* (else AHASD_ERR_STATE). */
typedef struct {
    uint32_t state, switching, draft_allowed, rank_enable;
} ahasd_gts_info;
int ahasd_gts_status(ahasd_dev *dev, ahasd_gts_info *info);
/* Wait until every queue is empty, TVC neither decides nor records and GTS is idle (bounded). */
int ahasd_wait_quiescent(ahasd_dev *dev);
/* Read every register of the map into regs[addr / 4] (holes left 0); n_words >= 64. */
int ahasd_snapshot(ahasd_dev *dev, uint32_t *regs, size_t n_words);
/* 1 if addr holds a register of the map. */
int ahasd_is_register(uint32_t addr);

/* ---- the control loop -------------------------------------------------------------------- */
/* Action bits of one service pass (ahasd_events.actions). */
enum {
    AHASD_ACT_EDC_STOP = 1u << 0,     /* an EDC stop decision was seen */
    AHASD_ACT_TVC_INSERT = 1u << 1,   /* TVC inserted a pre-verification */
    AHASD_ACT_TVC_ERROR = 1u << 2,    /* TVC rejected records (TVC_ERRORS rose) */
    AHASD_ACT_EDC_DROP = 1u << 3,     /* EDC forgot pending batches (EDC_FIFO_DROPS rose) */
    AHASD_ACT_QUEUE = 1u << 4,        /* a queue crossed its threshold (AHASD_ACT_QUEUE << q) */
    AHASD_ACT_PUSHBACK = 1u << 7,     /* a queue pushed back (AHASD_ACT_PUSHBACK << q) */
    AHASD_ACT_TVC_DISABLE = 1u << 10, /* limit action: TVC disabled */
    AHASD_ACT_EDC_ALWAYS = 1u << 11   /* limit action: EDC mode set to ALWAYS */
};

typedef struct {
    uint32_t pending;  /* INT_STATUS & INT_ENABLE found (and acknowledged) */
    uint32_t actions;  /* AHASD_ACT_* */
} ahasd_events;

/* One pass: read INT_STATUS, acknowledge the enabled bits that are set (write 1 to clear, before
 * handling, so an event during the handlers sets them again), handle each, then check the
 * counters that have no interrupt of their own. Returns AHASD_OK, a bus error, or
 * AHASD_ERR_TVC_RECORD / AHASD_ERR_EDC_DROPS in the pass that took a limit action. */
int ahasd_service(ahasd_dev *dev, ahasd_events *ev);
/* The loop: while irq_pending(ctx) says an interrupt is up, service it; at most max_passes
 * passes (then AHASD_ERR_TIMEOUT: an interrupt that cannot be cleared). ev accumulates. */
int ahasd_run(ahasd_dev *dev, int (*irq_pending)(void *ctx), void *ctx, uint32_t max_passes,
              ahasd_events *ev);

#ifdef __cplusplus
}
#endif
#endif
