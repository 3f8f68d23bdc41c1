package itest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// MetricSample is one sample of a Prometheus counter or gauge: its labels
// and value.
type MetricSample struct {
	Labels map[string]string
	Value  float64
}

// APIServerMetric reads the API server's /metrics (through cfg) and
// returns the samples of the metric name, e.g. apiserver_request_total
// (the requests of everyone: the managers', the node agent's, the test's).
func APIServerMetric(t testing.TB, cfg *rest.Config, name string) []MetricSample {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	return parseMetric(string(raw), name)
}

// parseMetric returns the samples of the metric name in Prometheus' text
// format.
func parseMetric(text, name string) []MetricSample {
	var out []MetricSample
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[strings.LastIndex(rest, " ")+1:]), 64)
		if err != nil {
			continue
		}
		s := MetricSample{Labels: map[string]string{}, Value: v}
		if i, j := strings.Index(rest, "{"), strings.LastIndex(rest, "}"); i == 0 && j > i {
			for _, kv := range strings.Split(rest[i+1:j], ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					s.Labels[k] = strings.Trim(v, `"`)
				}
			}
		}
		out = append(out, s)
	}
	return out
}
