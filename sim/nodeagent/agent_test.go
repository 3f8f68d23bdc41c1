package nodeagent

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/cloudinit"
	corev1 "k8s.io/api/core/v1"
)

func TestNormalizeEndpoint(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "join configuration host:port", in: "10.0.0.1:6443", want: "10.0.0.1:6443"},
		{name: "kubeconfig URL", in: "https://10.0.0.1:6443", want: "10.0.0.1:6443"},
		{name: "localhost means loopback", in: "https://localhost:6443", want: "127.0.0.1:6443"},
		{name: "default port", in: "api.example.com", want: "api.example.com:443"},
		{name: "IPv6", in: "https://[::1]:6443", want: "[::1]:6443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeEndpoint(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeEndpoint(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestHeartbeatIntervalIsBounded(t *testing.T) {
	a, err := New(Options{HeartbeatInterval: 10 * time.Second, MaxHeartbeatQPS: 100}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		nodes     int
		wantEvery time.Duration
		wantLease int32
	}{
		{name: "few nodes renew at the configured interval", nodes: 10, wantEvery: 10 * time.Second, wantLease: 40},
		{name: "1,000 nodes still fit at 100 renewals per second", nodes: 1000, wantEvery: 10 * time.Second, wantLease: 40},
		{name: "10,000 nodes stretch the interval to stay at 100 per second", nodes: 10000, wantEvery: 100 * time.Second, wantLease: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.beats = map[string]*beat{}
			for i := range tt.nodes {
				a.beats[string(rune(i))+"/x"] = &beat{}
			}
			if got := a.interval(); got != tt.wantEvery {
				t.Errorf("interval = %s, want %s", got, tt.wantEvery)
			}
			if got := a.leaseDuration(); got != tt.wantLease {
				t.Errorf("lease duration = %d, want %d", got, tt.wantLease)
			}
			for range 100 {
				if j := a.jitter(tt.wantEvery); j < tt.wantEvery*9/10 || j > tt.wantEvery*11/10 {
					t.Fatalf("jitter(%s) = %s, outside ±10%%", tt.wantEvery, j)
				}
			}
		})
	}
}

// TestLeaseRenewalsStayUnderTheCap grows a pool to 10,000 Nodes at 16 a
// second, as the many-pools benchmark does, and keeps it five minutes more:
// no second starts more Lease renewals than MaxHeartbeatQPS allows (the
// interval alone let the renewals of Nodes that joined early, when it was
// short, bunch to 73 in a second), the renewals keep up with the cap, and
// no Node goes longer than its Lease's duration without a renewal.
func TestLeaseRenewalsStayUnderTheCap(t *testing.T) {
	const qps, joinsPerSecond, nodes = 50, 16, 10000
	a, err := New(Options{HeartbeatInterval: 5 * time.Second, MaxHeartbeatQPS: qps}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.beats = map[string]*beat{}
	renewed := map[*beat]time.Time{}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var busiest, total, seconds int
	for sec := 0; sec < nodes/joinsPerSecond+300; sec++ {
		now = now.Add(time.Second)
		for i := 0; i < joinsPerSecond && len(a.beats) < nodes; i++ {
			key := fmt.Sprintf("pool/i-%d", len(a.beats))
			b := &beat{key: key, nodeName: key, next: now.Add(a.jitter(a.interval())), health: HealthOK, posted: corev1.ConditionTrue}
			a.beats[key] = b
			renewed[b] = now
		}
		for b, at := range renewed {
			if lease := time.Duration(a.leaseDuration()) * time.Second; now.Sub(at) > lease {
				t.Fatalf("second %d: node %s last renewed %s ago, beyond its %s lease", sec, b.nodeName, now.Sub(at), lease)
			}
		}
		due := a.takeDue(now)
		for _, b := range due {
			renewed[b] = now
			b.inflight = false
		}
		busiest = max(busiest, len(due))
		if len(a.beats) == nodes {
			total += len(due)
			seconds++
		}
	}
	if busiest > qps+1 {
		t.Errorf("the busiest second started %d Lease renewals, want at most %d", busiest, qps+1)
	}
	if rate := float64(total) / float64(seconds); rate < qps*0.9 {
		t.Errorf("with all %d Nodes joined, %.1f renewals a second, want about %d (the cap, which the interval keeps full)", nodes, rate, qps)
	}
	t.Logf("busiest second %d renewals; %.1f a second with all %d Nodes joined", busiest, float64(total)/float64(seconds), nodes)
}

func TestMetadata(t *testing.T) {
	tests := []struct {
		name string
		inst Instance
		want cloudinit.Metadata
	}{
		{
			name: "an instance without metadata (a cloud from before faces) has its fields",
			inst: Instance{ID: "i-1", Hostname: "pool-i-1", PrivateIP: "10.0.0.1", Zone: "z1"},
			want: cloudinit.Metadata{LocalHostname: "pool-i-1", InstanceID: "i-1", LocalIPv4: "10.0.0.1", AvailabilityZone: "z1"},
		},
		{
			name: "a face's metadata wins and keeps its own keys",
			inst: Instance{
				ID: "i-1", Hostname: "pool-i-1", PrivateIP: "10.0.0.1", Zone: "z1",
				Metadata: map[string]string{"local_hostname": "ip-10-0-0-1.ec2.internal", "instance_id": "i-0abc", "region": "us-east-1", "account_id": "1"},
			},
			want: cloudinit.Metadata{
				LocalHostname: "ip-10-0-0-1.ec2.internal", InstanceID: "i-0abc", LocalIPv4: "10.0.0.1", AvailabilityZone: "z1", Region: "us-east-1",
				Extra: map[string]string{"local_hostname": "ip-10-0-0-1.ec2.internal", "instance_id": "i-0abc", "region": "us-east-1", "account_id": "1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metadata(tt.inst); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("metadata() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
