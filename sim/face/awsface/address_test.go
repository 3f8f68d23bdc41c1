package awsface

import "testing"

// TestSubnetAddressSkipsAddressesInUse: the sequence picks the address,
// one in use is skipped, and the pick wraps within the subnet's usable
// addresses (two sequences 4,091 apart used to share one, and their
// instances one Node name).
func TestSubnetAddressSkipsAddressesInUse(t *testing.T) {
	sub := &awsSubnet{third: 16}
	if got := subnetAddress(sub, 0, nil); got != "10.0.16.4" {
		t.Errorf("sequence 0 = %s, want 10.0.16.4 (the first after AWS's four reserved)", got)
	}
	last := subnetAddress(sub, subnetHosts-1, nil)
	if last != "10.0.31.254" {
		t.Errorf("sequence %d = %s, want 10.0.31.254 (the /20's last usable)", subnetHosts-1, last)
	}
	used := map[string]bool{"10.0.16.4": true, "10.0.16.5": true}
	inUse := func(ip string) bool { return used[ip] }
	if got := subnetAddress(sub, subnetHosts, inUse); got != "10.0.16.6" {
		t.Errorf("sequence %d with 10.0.16.4-5 in use = %s, want 10.0.16.6", subnetHosts, got)
	}
	used[last] = true
	if got := subnetAddress(sub, subnetHosts-1, inUse); got != "10.0.16.6" {
		t.Errorf("sequence %d with its address in use = %s, want the next free, wrapping: 10.0.16.6", subnetHosts-1, got)
	}
	all := func(string) bool { return true }
	if got := subnetAddress(sub, 7, all); got != "10.0.16.11" {
		t.Errorf("a full subnet = %s, want the sequence's own address 10.0.16.11", got)
	}
}
