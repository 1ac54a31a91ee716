/* NodePorts: host port conflicts (the conformance "nodeports" scenario). */
#include "plugin_test.h"

#define REASON "node(s) didn't have free ports for the requested pod ports"

static ks_pod_t *port_pod(const char *name, int32_t port, ks_protocol_t proto,
                          const char *ip)
{
    ks_pod_t *p = mock_pod_new("default", name, 100, 128 * MI);
    mock_pod_add_port(p, 0, port, port, proto, ip);
    return p;
}

START_TEST(conformance_nodeports)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodePorts");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *h1 = mock_nodeinfo_new(mock_node_new("h1", 4000, 8 * GI, 110));
    ks_node_info_t *h2 = mock_nodeinfo_new(mock_node_new("h2", 4000, 8 * GI, 110));
    ks_node_info_t *h3 = mock_nodeinfo_new(mock_node_new("h3", 4000, 8 * GI, 110));
    ks_status_t *st = mock_status_new();
    ks_pod_t *web, *dns_tcp, *mon_other, *mon_any;

    mock_nodeinfo_add_pod(h1, port_pod("ing-0", 80, KS_PROTO_TCP, ""));
    mock_nodeinfo_add_pod(h2, port_pod("dns-0", 53, KS_PROTO_UDP, ""));
    mock_nodeinfo_add_pod(h3, port_pod("mon-0", 9100, KS_PROTO_TCP, "10.0.0.3"));

    web = port_pod("web", 80, KS_PROTO_TCP, "");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, web, h1, st),
                     KS_UNSCHEDULABLE);
    ck_assert_str_eq(mock_status_text(st), REASON);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, web, h2, st), KS_SUCCESS);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, web, h3, st), KS_SUCCESS);

    /* Same port, other protocol: no conflict. */
    dns_tcp = port_pod("dns-tcp", 53, KS_PROTO_TCP, "");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, dns_tcp, h2, st),
                     KS_SUCCESS);

    /* Another specific IP does not conflict; 0.0.0.0 conflicts with any. */
    mon_other = port_pod("mon-other-ip", 9100, KS_PROTO_TCP, "10.0.0.4");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, mon_other, h3, st),
                     KS_SUCCESS);
    mon_any = port_pod("mon-any-ip", 9100, KS_PROTO_TCP, "");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, mon_any, h3, st),
                     KS_UNSCHEDULABLE);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(specific_ip_vs_any)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodePorts");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new("n", 4000, 8 * GI, 110));
    ks_status_t *st = mock_status_new();
    ks_pod_t *same_ip = port_pod("same", 8080, KS_PROTO_TCP, "10.0.0.1");
    ks_pod_t *no_port = mock_pod_new("default", "plain", 100, 0);

    /* Used on 0.0.0.0 (written out): any specific IP conflicts. */
    mock_nodeinfo_add_pod(ni, port_pod("any", 8080, KS_PROTO_TCP, "0.0.0.0"));
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, same_ip, ni, st),
                     KS_UNSCHEDULABLE);
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, no_port, ni, st),
                     KS_SUCCESS);
    {
        /* Without host ports PreFilter answers Skip: Filter cannot fail. */
        ks_cycle_state_t *cs = mock_cycle_state_new();
        ks_prefilter_result_t *r = mock_prefilter_result_new();
        ck_assert_int_eq(p->pre_filter(self, cs, no_port, r, st), KS_SKIP);
        ck_assert_int_eq(p->pre_filter(self, cs, same_ip, r, st), KS_SUCCESS);
        mock_prefilter_result_free(r);
        mock_cycle_state_free(cs);
    }
    /* A container port without a host port never conflicts. */
    mock_pod_add_port(no_port, 0, 8080, 0, KS_PROTO_TCP, "");
    ck_assert_int_eq(mock_prefilter_filter(mh, p, self, no_port, ni, st),
                     KS_SUCCESS);
    p->destroy(self);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

START_TEST(filter_needs_prefilter_and_events)
{
    mock_host_t *mh = mock_host_new();
    const ks_plugin_t *p = pt_load("NodePorts");
    void *self = pt_create(mh, p, NULL);
    ks_node_info_t *ni = mock_nodeinfo_new(mock_node_new("n", 4000, 8 * GI, 110));
    ks_pod_t *pod = port_pod("web", 80, KS_PROTO_TCP, "");
    ks_cycle_state_t *cs = mock_cycle_state_new();
    ks_status_t *st = mock_status_new();
    ks_cluster_event_t ev[3];

    ck_assert_int_eq(p->filter(self, cs, pod, ni, st), KS_ERROR);
    ck_assert_str_eq(mock_status_text(st),
                     "error reading \"PreFilterNodePorts\" from cycleState: "
                     "not found");
    ck_assert_uint_eq(p->events_to_register(self, ev, 3), 2);
    ck_assert_uint_eq(ev[0].resource, KS_RES_POD);
    ck_assert_uint_eq(ev[0].action, KS_ACT_DELETE);
    ck_assert_uint_eq(ev[1].resource, KS_RES_NODE);
    ck_assert_uint_eq(ev[1].action, KS_ACT_ADD);
    p->destroy(self);
    mock_cycle_state_free(cs);
    mock_status_free(st);
    mock_host_free(mh);
    mock_free_all();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("NodePorts");
    TCase *tc = tcase_create("filter");
    tcase_add_test(tc, conformance_nodeports);
    tcase_add_test(tc, specific_ip_vs_any);
    tcase_add_test(tc, filter_needs_prefilter_and_events);
    suite_add_tcase(s, tc);
    return pt_run(s);
}
