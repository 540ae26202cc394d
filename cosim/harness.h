/* The ahasd Verilator harness: a C API over one Verilated design.
 *
 * The core (harness.cpp) knows nothing of a particular design: a small generated glue file gives
 * it the design's port table (ahs_design_new). On top of the ports the core runs
 *
 *   - clock domains, each with its own period in picoseconds; simulated time advances from one
 *     rising edge to the next (edges of several domains at the same time are one event);
 *   - sources: a payload pushed into a stream is presented (valid, payload ports) when its domain
 *     ticks and held until the stream's ready is seen high (no ready port: one cycle). Sources
 *     that share a lane present their items strictly in push order; a lane may also hold "set"
 *     items (drive a port, no time), "pulse" items (drive a port for one cycle, then 0) and idle
 *     items;
 *   - sinks: a stream's payload is collected in every cycle its valid (and the ready the sink
 *     drives, after its pattern) is high;
 *   - port drivers (a random or repeating 0/1 pattern on a 1-bit input), watches (log every change
 *     of a port, sampled before each edge) and AXI4-Lite masters (blocking register read/write).
 *
 * Values cross the API as little-endian arrays of 32-bit words, ceil(width / 32) per port; a
 * stream's payload is its payload ports' words one after another.
 *
 * Timing rule: inputs change right after a rising edge of their domain; outputs are sampled just
 * before the edge (what a synchronous consumer captures at that edge). A cycle number is the index
 * of the rising edge of its domain (0 = the first edge).
 *
 * Every function that can fail returns a negative value and leaves a message for ahs_error().
 */
#ifndef AHASD_HARNESS_H
#define AHASD_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One port of the design, as the generated glue lists it. */
typedef struct {
    const char* name;
    int width;      /* bits */
    int is_input;
    void* data;     /* CData*, SData*, IData*, QData* or the words of a VlWide<N> */
} ahs_port_info;

/* A design instance, made by the generated glue. */
typedef struct {
    void* model;
    void (*eval)(void* model);
    void (*finish)(void* model);     /* final() and delete */
    const ahs_port_info* ports;
    int n_ports;
} ahs_design;

ahs_design* ahs_design_new(int argc, char** argv);   /* generated per design */

typedef struct ahs_harness ahs_harness;

enum { AHS_ALWAYS = 0, AHS_NEVER = 1, AHS_RANDOM = 2, AHS_PATTERN = 3 };

ahs_harness* ahs_create(ahs_design* design);
void ahs_destroy(ahs_harness* h);
const char* ahs_error(const ahs_harness* h);

/* Ports: index by name (-1 if none), width, 32-bit words. */
int ahs_port(const ahs_harness* h, const char* name);
int ahs_port_width(const ahs_harness* h, int port);
int ahs_words(int width);
int ahs_set(ahs_harness* h, int port, const uint32_t* words);   /* drive an input now */
int ahs_poke(ahs_harness* h, int port, const uint32_t* words);  /* ... without settling: */
void ahs_settle(ahs_harness* h);                                /* evaluate after pokes */
int ahs_get(ahs_harness* h, int port, uint32_t* words);         /* settled value now */

/* Clock domains. rst may be NULL. Returns the domain index. */
int ahs_domain(ahs_harness* h, const char* name, const char* clk, const char* rst,
               uint64_t period_ps);
int ahs_domain_index(const ahs_harness* h, const char* name);
int ahs_reset(ahs_harness* h, int domain, int cycles);  /* rst high for the next `cycles` edges */
uint64_t ahs_time_ps(const ahs_harness* h);
uint64_t ahs_cycles(const ahs_harness* h, int domain);

/* Advance time until `domain` has ticked `cycles` more times. */
int ahs_step(ahs_harness* h, int domain, uint64_t cycles);
/* Advance until every lane is empty (all pushed items accepted); at most max_cycles of domain. */
int ahs_drain(ahs_harness* h, int domain, uint64_t max_cycles);
/* Advance until `port` settles to `words` (checked after each edge of domain). */
int ahs_until(ahs_harness* h, int port, const uint32_t* words, int domain, uint64_t max_cycles);
/* Advance until `sink` has collected `total` items since it was made. */
int ahs_until_count(ahs_harness* h, int sink, uint64_t total, int domain, uint64_t max_cycles);

/* Streams. ready < 0: no ready port (always ready). payload: n_payload port indices. lane NULL:
 * a lane of its own. Return the source / sink index. */
int ahs_source(ahs_harness* h, const char* name, int domain, int valid, int ready,
               const int* payload, int n_payload, const char* lane);
int ahs_source_index(const ahs_harness* h, const char* name);
int ahs_source_gaps(ahs_harness* h, int source, double p_idle, uint64_t seed);
int ahs_source_timeout(ahs_harness* h, int source, uint64_t max_wait);
/* Keep a log of accepted items (off by default, so long runs stay in bounded memory). */
int ahs_source_log(ahs_harness* h, int source, int on);
int ahs_push(ahs_harness* h, int source, const uint32_t* payload);
int ahs_lane_index(const ahs_harness* h, const char* name);
int ahs_lane_set(ahs_harness* h, int lane, int port, const uint32_t* words);
int ahs_lane_pulse(ahs_harness* h, int lane, int port, const uint32_t* words);
int ahs_lane_idle(ahs_harness* h, int lane, uint64_t cycles);
size_t ahs_lane_pending(const ahs_harness* h, int lane);
/* Accepted items of a source since the last call: (cycle, cycles waited with ready low). */
size_t ahs_accepted(ahs_harness* h, int source, uint64_t* cycle, uint64_t* waited, size_t max);

int ahs_sink(ahs_harness* h, const char* name, int domain, int valid, int ready,
             const int* payload, int n_payload);
int ahs_sink_index(const ahs_harness* h, const char* name);
int ahs_sink_words(const ahs_harness* h, int sink);   /* payload words per item */
/* Drive the sink's ready: AHS_ALWAYS/NEVER, AHS_RANDOM (p_high, seed), AHS_PATTERN ("0110"). */
int ahs_sink_ready(ahs_harness* h, int sink, int mode, double p_high, uint64_t seed,
                   const char* pattern);
/* Collected items since the last call: their cycles and payload words (max items). */
size_t ahs_pop(ahs_harness* h, int sink, uint64_t* cycle, uint32_t* words, size_t max);
size_t ahs_collected(const ahs_harness* h, int sink);   /* waiting to be popped */

/* A 1-bit input driven after each edge of `domain` by a pattern (as ahs_sink_ready). */
int ahs_drive(ahs_harness* h, int port, int domain, int mode, double p_high, uint64_t seed,
              const char* pattern);
/* Log the changes of `port` (sampled before each edge of domain). */
int ahs_watch(ahs_harness* h, int port, int domain);
size_t ahs_watched(ahs_harness* h, int watch, uint64_t* cycle, uint32_t* words, size_t max);

/* AXI4-Lite master on the ports <prefix>_awaddr ... <prefix>_rready. */
int ahs_axil(ahs_harness* h, const char* prefix, int domain);
int ahs_mmio_read(ahs_harness* h, int bus, uint32_t addr, uint32_t* data, int* resp,
                  uint64_t max_cycles);
int ahs_mmio_write(ahs_harness* h, int bus, uint32_t addr, uint32_t data, uint32_t strb,
                   int* resp, uint64_t max_cycles);

#ifdef __cplusplus
}
#endif
#endif
