/* AHASD host control loop: interrupt service and the reaction to each event.
 *
 * Reactions (one service pass, ahasd_service):
 *   edc_stop    EDC said stop: the controller has already asked TVC for a pre-verification
 *               decision (hardware does that), so the host only reads EDC_STATUS (look-ahead
 *               depth, pending batches) for its statistics. Action bit AHASD_ACT_EDC_STOP.
 *   tvc_insert  TVC inserted a pre-verification task: read TVC_STATUS (its length). GTS runs it
 *               ahead of drafting on its own. AHASD_ACT_TVC_INSERT.
 *   tvc_error   TVC rejected a record (zero length or an operand out of range): read TVC_ERRORS.
 *               When cfg.tvc_error_limit is reached, TVC's averages are not trusted any more:
 *               TVC is disabled (TVC_CTRL.disable) and the pass returns AHASD_ERR_TVC_RECORD.
 *   queue q     a queue's fill rose to its threshold (the consumer lags; the producer is
 *               back-pressured by the hardware, nothing is lost): read the queue's STATUS.
 *               AHASD_ACT_QUEUE << q.
 * and in every pass, whether or not an interrupt came (these events have no interrupt):
 *   EDC FIFO drops  EDC_FIFO_DROPS rose: EDC forgot pending batches, so its history no longer
 *               matches the verifications. When cfg.edc_drop_limit is reached, EDC is
 *               overridden to mode ALWAYS and the pass returns AHASD_ERR_EDC_DROPS.
 *   push-backs  a queue's PUSHBACKS counter rose (its producer waited): AHASD_ACT_PUSHBACK << q.
 * A limit action is taken once (until the next ahasd_init).
 */
#include "ahasd_driver.h"

static const uint32_t queue_bit[AHASD_QUEUES] = {
    AHASD_CTRL__INT_STATUS__DRAFT_Q_bm, AHASD_CTRL__INT_STATUS__FEEDBACK_Q_bm,
    AHASD_CTRL__INT_STATUS__PREVERIFY_Q_bm};
static const uint32_t queue_status[AHASD_QUEUES] = {
    AHASD_REG(DRAFT_Q.STATUS), AHASD_REG(FEEDBACK_Q.STATUS), AHASD_REG(PREVERIFY_Q.STATUS)};
static const uint32_t queue_pushbacks[AHASD_QUEUES] = {
    AHASD_REG(DRAFT_Q.PUSHBACKS), AHASD_REG(FEEDBACK_Q.PUSHBACKS),
    AHASD_REG(PREVERIFY_Q.PUSHBACKS)};

/* A counter read: set *rose when it went up since *last (a drop means it was cleared). */
static int counter(ahasd_dev *dev, uint32_t addr, uint32_t *last, int *rose) {
    uint32_t now;
    int rc = ahasd_read(dev, addr, &now);
    if (rc) return rc;
    *rose = now > *last;
    *last = now;
    return AHASD_OK;
}

static int limits(ahasd_dev *dev, ahasd_events *ev) {
    int rc;
    if (dev->cfg.tvc_error_limit && !dev->tvc_disabled &&
        dev->tvc_errors >= dev->cfg.tvc_error_limit) {
        rc = ahasd_modify(dev, AHASD_REG(TVC_CTRL), AHASD_CTRL__TVC_CTRL__DISABLE_bm,
                          AHASD_CTRL__TVC_CTRL__DISABLE_bm);
        if (rc) return rc;
        dev->tvc_disabled = 1;
        ev->actions |= AHASD_ACT_TVC_DISABLE;
        return AHASD_ERR_TVC_RECORD;
    }
    if (dev->cfg.edc_drop_limit && !dev->edc_fallback &&
        dev->edc_drops >= dev->cfg.edc_drop_limit) {
        rc = ahasd_set_edc_mode(dev, AHASD_CTRL__EDC_CTRL__MODE__ALWAYS);
        if (rc) return rc;
        dev->edc_fallback = 1;
        ev->actions |= AHASD_ACT_EDC_ALWAYS;
        return AHASD_ERR_EDC_DROPS;
    }
    return AHASD_OK;
}

int ahasd_service(ahasd_dev *dev, ahasd_events *ev) {
    uint32_t status, pending;
    int rc, rose;
    if ((rc = ahasd_read(dev, AHASD_REG(INT_STATUS), &status))) return rc;
    pending = status & dev->cfg.irq_enable;
    if (pending) {
        if ((rc = ahasd_write(dev, AHASD_REG(INT_STATUS), pending))) return rc;
        dev->interrupts++;
    }
    ev->pending |= pending;
    if (pending & AHASD_CTRL__INT_STATUS__EDC_STOP_bm) {
        if ((rc = ahasd_read(dev, AHASD_REG(EDC_STATUS), &dev->edc_status))) return rc;
        dev->edc_stops++;
        ev->actions |= AHASD_ACT_EDC_STOP;
    }
    if (pending & AHASD_CTRL__INT_STATUS__TVC_INSERT_bm) {
        if ((rc = ahasd_read(dev, AHASD_REG(TVC_STATUS), &dev->tvc_status))) return rc;
        dev->tvc_inserts++;
        ev->actions |= AHASD_ACT_TVC_INSERT;
    }
    for (int q = 0; q < AHASD_QUEUES; q++) {
        if (!(pending & queue_bit[q])) continue;
        if ((rc = ahasd_read(dev, queue_status[q], &dev->queue[q].status))) return rc;
        dev->queue[q].crossings++;
        ev->actions |= (uint32_t)AHASD_ACT_QUEUE << q;
    }
    if ((rc = counter(dev, AHASD_REG(TVC_ERRORS), &dev->tvc_errors, &rose))) return rc;
    if (rose || (pending & AHASD_CTRL__INT_STATUS__TVC_ERROR_bm))
        ev->actions |= AHASD_ACT_TVC_ERROR;
    if ((rc = counter(dev, AHASD_REG(EDC_FIFO_DROPS), &dev->edc_drops, &rose))) return rc;
    if (rose) ev->actions |= AHASD_ACT_EDC_DROP;
    for (int q = 0; q < AHASD_QUEUES; q++) {
        if ((rc = counter(dev, queue_pushbacks[q], &dev->queue[q].pushbacks, &rose))) return rc;
        if (rose) ev->actions |= (uint32_t)AHASD_ACT_PUSHBACK << q;
    }
    return limits(dev, ev);
}

int ahasd_run(ahasd_dev *dev, int (*irq_pending)(void *ctx), void *ctx, uint32_t max_passes,
              ahasd_events *ev) {
    int result = AHASD_OK;
    for (uint32_t pass = 0; pass < max_passes; pass++) {
        if (!irq_pending(ctx)) return result;
        int rc = ahasd_service(dev, ev);
        if (rc == AHASD_ERR_TVC_RECORD || rc == AHASD_ERR_EDC_DROPS) result = rc;
        else if (rc) return rc;
    }
    return irq_pending(ctx) ? AHASD_ERR_TIMEOUT : result;
}
