package features

import "testing"

func TestGates(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string
		flag     string
		wantPool bool
		wantSkip bool
		wantErr  bool
	}{
		{name: "defaults follow the docs: MachinePool on, skip off", wantPool: true},
		{name: "EXP_MACHINE_POOL=false turns the pool gate off", env: map[string]string{"EXP_MACHINE_POOL": "false"}},
		{name: "skip gate from its env var", env: map[string]string{"EXP_SKIP_MACHINE_POOL_MODEL_RECONCILIATION": "true"}, wantPool: true, wantSkip: true},
		{name: "the flag wins over the env var", env: map[string]string{"EXP_MACHINE_POOL": "false"}, flag: "MachinePool=true", wantPool: true},
		{name: "a bad env value is refused", env: map[string]string{"EXP_MACHINE_POOL": "maybe"}, wantErr: true},
		{name: "an unknown gate in the flag is refused", flag: "NoSuchGate=true", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGate()
			err := ApplyEnv(g, func(k string) string { return tc.env[k] })
			if err == nil && tc.flag != "" {
				err = g.Set(tc.flag)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := g.Enabled(MachinePool); got != tc.wantPool {
				t.Errorf("MachinePool = %v, want %v", got, tc.wantPool)
			}
			if got := g.Enabled(SkipMachinePoolModelReconciliation); got != tc.wantSkip {
				t.Errorf("SkipMachinePoolModelReconciliation = %v, want %v", got, tc.wantSkip)
			}
		})
	}
}
