package nodeagent

import (
	"reflect"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/cloudinit"
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
