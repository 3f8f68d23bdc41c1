package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryKeepsItsLayers runs the rules over the repository.
func TestRepositoryKeepsItsLayers(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	module, err := ModulePath(root)
	if err != nil {
		t.Fatal(err)
	}
	violations, err := Check(root, module, Rules())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
}

// TestCheckFindsCrossingImports builds a small module with one crossing
// import per rule (and allowed imports beside them) and checks that each
// crossing, and only it, is reported: the check can fail.
func TestCheckFindsCrossingImports(t *testing.T) {
	root := t.TempDir()
	write := func(path, imports string) {
		t.Helper()
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "package " + filepath.Base(filepath.Dir(full)) + "\n\nimport (\n" + imports + ")\n"
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "")
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("api/core/v1/types.go", "\t\"fmt\"\n\t\"k8s.io/apimachinery/pkg/runtime\"\n\t\"example.com/m/internal/workload\"\n")
	write("internal/controller/pool/engine.go", "\t\"example.com/m/internal/rollout\"\n\t\"example.com/m/sim/core\"\n")
	write("internal/controller/pool/engine_test.go", "\t\"example.com/m/sim/core\"\n")
	write("internal/provider/local/local.go", "\t\"example.com/m/sim/wire/localapi\"\n\t\"example.com/m/sim/core\"\n")
	write("internal/cli/up.go", "\t\"example.com/m/sim/cloudsim\"\n")
	write("sim/face/eksface/rollout.go", "\t\"github.com/aws/aws-sdk-go-v2/aws\"\n\t\"example.com/m/internal/drain\"\n\t\"example.com/m/internal/provider/aws\"\n")
	write("sim/core/cloud.go", "\t\"example.com/m/sim/nodeagent\"\n\t\"example.com/m/sim/face/awsface\"\n")
	write("internal/cli/plan.go", "\t\"example.com/m/internal/preview\"\n\t\"example.com/m/internal/controller/infrapool\"\n")
	write("internal/provider/azure/vmss.go", "\t\"github.com/Azure/azure-sdk-for-go/sdk/azcore\"\n\t\"example.com/m/internal/provider/azure/wire\"\n\t\"example.com/m/internal/provider/aws\"\n")
	write("internal/manager/manager.go", "\t\"github.com/aws/aws-sdk-go-v2/aws\"\n")
	write("sim/face/azureface/vmss.go", "\t\"github.com/Azure/azure-sdk-for-go/sdk/azcore\"\n")
	write("sim/nodeagent/agent.go", "\t\"github.com/aws/aws-sdk-go-v2/aws\"\n")
	write("internal/preview/preview.go", "\t\"example.com/m/internal/controller/infrapool\"\n")
	write("internal/provider/gcp/adapter.go", "\t\"example.com/m/internal/provider/contract\"\n\t\"example.com/m/internal/provider/kit\"\n\t\"example.com/m/internal/controller/infrapool\"\n")
	write("internal/provider/kit/retry.go", "\t\"net/http\"\n\t\"github.com/aws/aws-sdk-go-v2/aws\"\n")

	got, err := Check(root, "example.com/m", Rules())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"api/core/v1/types.go imports ./internal/workload",
		"internal/cli/plan.go imports ./internal/controller/infrapool",
		"internal/controller/pool/engine.go imports ./sim/core",
		"internal/manager/manager.go imports github.com/aws/aws-sdk-go-v2/aws",
		"internal/preview/preview.go imports ./internal/controller/infrapool",
		"internal/provider/azure/vmss.go imports ./internal/provider/aws",
		"internal/provider/gcp/adapter.go imports ./internal/controller/infrapool",
		"internal/provider/kit/retry.go imports github.com/aws/aws-sdk-go-v2/aws",
		"internal/provider/local/local.go imports ./sim/core",
		"sim/core/cloud.go imports ./sim/face/awsface",
		"sim/face/eksface/rollout.go imports ./internal/provider/aws",
		"sim/nodeagent/agent.go imports github.com/aws/aws-sdk-go-v2/aws",
	}
	var gotLines []string
	for _, v := range got {
		gotLines = append(gotLines, v.File+" imports "+v.Import)
	}
	if strings.Join(gotLines, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(gotLines, "\n"), strings.Join(want, "\n"))
	}
}
