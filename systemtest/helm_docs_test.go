package systemtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsValuesRender: every values file a page of docs/ shows (a YAML
// block headed "# values-<name>.yaml") installs as the chart's schema and
// templates take it, so that no page tells a user a value the chart
// refuses.
func TestDocsValuesRender(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	block := regexp.MustCompile("(?s)```yaml\n(# (values-[a-z0-9-]+\\.yaml)\n.*?)```")
	dir := t.TempDir()
	found := 0
	err := filepath.WalkDir("../docs", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range block.FindAllStringSubmatch(string(text), -1) {
			found++
			file := filepath.Join(dir, m[2])
			if err := os.WriteFile(file, []byte(m[1]), 0o644); err != nil {
				return err
			}
			out, err := exec.Command(helm, "template", "zs", chart, "-n", "zonestream", "-f", file).CombinedOutput()
			if err != nil {
				t.Errorf("%s: %s does not render: %v\n%s", path, m[2], err, out)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 5 {
		t.Fatalf("found %d values files in docs/, the provider pages show more", found)
	}
}
