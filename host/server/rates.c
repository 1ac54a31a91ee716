/* The console's once-a-second samples (rates.h). */
#include "rates.h"

#include <string.h>

#include "base/error.h"

const ks_rate_sample_t *ks_rates_at(const ks_rates_t *r, size_t i)
{
    return &r->ring[(r->head + i) % KS_RATES_SAMPLES];
}

void ks_rates_sample(ks_rates_t *r, double unix_time)
{
    ks_rate_sample_t s;
    uint64_t delta[KS_ATTEMPT_LAT_BUCKETS];
    size_t slots = KS_RATES_WINDOW + 1, cur = r->lat_n % slots, old, b;
    memset(&s, 0, sizeof s);
    if (r->read)
        r->read(r->ud, &s);
    s.unix_time = unix_time;
    /* Latency over the window: this reading minus the one taken
     * KS_RATES_WINDOW seconds ago (or the first one). */
    if (r->attempts)
        memcpy(r->lat_hist[cur], r->attempts->lat, sizeof r->lat_hist[cur]);
    old = r->lat_n >= KS_RATES_WINDOW ? (r->lat_n - KS_RATES_WINDOW) % slots
                                      : SIZE_MAX;
    for (b = 0; b < KS_ATTEMPT_LAT_BUCKETS; b++)
        delta[b] = r->lat_hist[cur][b] -
                   (old == SIZE_MAX ? 0 : r->lat_hist[old][b]);
    r->lat_n++;
    s.p50 = (float)ks_attempts_quantile(delta, 0.50);
    s.p90 = (float)ks_attempts_quantile(delta, 0.90);
    s.p99 = (float)ks_attempts_quantile(delta, 0.99);
    if (r->n == KS_RATES_SAMPLES) {
        r->ring[r->head] = s;
        r->head = (r->head + 1) % KS_RATES_SAMPLES;
    } else {
        r->ring[(r->head + r->n) % KS_RATES_SAMPLES] = s;
        r->n++;
    }
}

static void on_tick(uv_timer_t *t)
{
    ks_rates_t *r = t->data;
    uv_timeval64_t tv;
    double now = uv_gettimeofday(&tv) == 0
                     ? (double)tv.tv_sec + (double)tv.tv_usec * 1e-6
                     : 0;
    ks_rates_sample(r, now);
}

int ks_rates_start(ks_rates_t *r, uv_loop_t *loop,
                   const ks_attempts_t *attempts, ks_rates_read_fn read,
                   void *ud)
{
    r->attempts = attempts;
    r->read = read;
    r->ud = ud;
    if (uv_timer_init(loop, &r->timer) != 0)
        return KS_EIO;
    r->timer.data = r;
    r->started = 1;
    if (uv_timer_start(&r->timer, on_tick, 1000, 1000) != 0)
        return KS_EIO;
    uv_unref((uv_handle_t *)&r->timer);
    return 0;
}

void ks_rates_close(ks_rates_t *r)
{
    if (!r->started)
        return;
    r->started = 0;
    uv_close((uv_handle_t *)&r->timer, NULL);
}
