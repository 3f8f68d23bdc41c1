package itest

import (
	"reflect"
	"testing"
)

func TestParseMetric(t *testing.T) {
	text := `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="pods",subresource="",verb="GET"} 12
apiserver_request_total{code="201",resource="nodes",subresource="status",verb="PATCH"} 3.5
apiserver_request_total_other{verb="GET"} 99
apiserver_request_total 7
`
	got := parseMetric(text, "apiserver_request_total")
	want := []MetricSample{
		{Labels: map[string]string{"code": "200", "resource": "pods", "subresource": "", "verb": "GET"}, Value: 12},
		{Labels: map[string]string{"code": "201", "resource": "nodes", "subresource": "status", "verb": "PATCH"}, Value: 3.5},
		{Labels: map[string]string{}, Value: 7},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseMetric = %+v\nwant %+v", got, want)
	}
}
