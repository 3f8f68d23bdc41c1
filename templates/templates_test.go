package templates

import (
	"io/fs"
	"testing"
)

// TestEveryFileIsAFlavor keeps the embedded files and the Flavor table in
// step: a template without an entry could never be generated, an entry
// without a file would fail at run time.
func TestEveryFileIsAFlavor(t *testing.T) {
	want := map[string]bool{}
	for _, f := range Flavors() {
		if _, err := f.Template(); err != nil {
			t.Errorf("flavor %s/%s: %v", f.Infrastructure, f.Name, err)
		}
		if len(f.LeftOut) == 0 {
			t.Errorf("flavor %s/%s says nothing about what it leaves out", f.Infrastructure, f.Name)
		}
		want[f.Path()] = true
	}
	paths, err := fs.Glob(files, "*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if !want[p] {
			t.Errorf("%s is embedded but is no Flavor", p)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name, infra, flavor, wantErr string
	}{
		{name: "a flavor that exists", infra: "azure", flavor: "machinepool-flex"},
		{name: "an unknown flavor names the infrastructure's flavors", infra: "aws", flavor: "nope",
			wantErr: `infrastructure aws has no flavor "nope"; its flavors: eks-managedmachinepool, machinepool`},
		{name: "an unknown infrastructure names those there are", infra: "openstack", flavor: "machinepool",
			wantErr: `no flavors for infrastructure "openstack"; there are flavors for aws, azure, gcp, local`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Lookup(tt.infra, tt.flavor)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			case tt.wantErr == "" && (f.Infrastructure != tt.infra || f.Name != tt.flavor):
				t.Fatalf("got %s/%s", f.Infrastructure, f.Name)
			}
		})
	}
}
