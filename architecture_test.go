package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestPackagesKeepTheirLayers checks docs/ARCHITECTURE.md's layer table against `go list`: every package is
// in a layer, and imports only leaves, lower layers, or its own tree in its own layer.
func TestPackagesKeepTheirLayers(t *testing.T) {
	layers := readLayers(t, "docs/ARCHITECTURE.md")
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "runwatch"
	seen := 0
	used := map[string]bool{} // the table's rows that name a package go list knows
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			pkg = module
		}
		layer, ok := layerOf(layers, pkg)
		if !ok {
			t.Errorf("package %s is in no layer of docs/ARCHITECTURE.md: add it to the table", pkg)
			continue
		}
		seen++
		used[rowOf(layers, pkg)] = true
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if !ours {
				continue
			}
			depLayer, ok := layerOf(layers, dep)
			switch {
			case !ok:
				// reported as its own package
			case layer == 0:
				t.Errorf("%s is a leaf (layer 0) but imports %s", pkg, dep)
			case depLayer == 0 || depLayer < layer:
			case depLayer == layer && tree(dep) == tree(pkg):
			case depLayer == layer:
				t.Errorf("%s imports %s: both are in layer %d but in different trees; only a lower layer may be imported", pkg, dep, layer)
			default:
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", pkg, layer, dep, depLayer)
			}
		}
	}
	if seen < 30 {
		t.Fatalf("only %d packages checked: go list or the table was not read right", seen)
	}
	for p := range layers {
		if !used[p] {
			t.Errorf("docs/ARCHITECTURE.md's layer table names %s, which is no package of the module", p)
		}
	}
}

// readLayers reads the table between the layers markers: a pattern ("state", "state/*") → its layer.
func readLayers(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- layers:start"):
			in = true
			continue
		case strings.HasPrefix(line, "<!-- layers:end"):
			in = false
		}
		cells := strings.Split(line, "|")
		if !in || len(cells) < 4 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // the header and its rule
		}
		for _, p := range strings.Split(cells[2], ",") {
			p = strings.Trim(strings.TrimSpace(p), "`")
			if was, dup := layers[p]; dup {
				t.Errorf("%s: %s is in layer %d and again in layer %d", path, p, was, n)
			}
			layers[p] = n
		}
	}
	if len(layers) == 0 {
		t.Fatalf("%s: no layer table between the layers markers", path)
	}
	return layers
}

// layerOf finds pkg's layer: its own row, else the nearest tree/* row above it.
func layerOf(layers map[string]int, pkg string) (int, bool) {
	n, ok := layers[rowOf(layers, pkg)]
	return n, ok
}

// rowOf is the table's entry that places pkg: pkg itself, else the nearest tree/* above it; "" for none.
func rowOf(layers map[string]int, pkg string) string {
	if _, ok := layers[pkg]; ok {
		return pkg
	}
	for p := pkg; strings.Contains(p, "/"); {
		p = p[:strings.LastIndex(p, "/")]
		if _, ok := layers[p+"/*"]; ok {
			return p + "/*"
		}
	}
	return ""
}

func tree(pkg string) string {
	top, _, _ := strings.Cut(pkg, "/")
	return top
}

// TestCLIKnowsNoConvention: cli is wiring; what it needs of a run's files (a RUN_ID, a task's name, a
// feature's work type) it asks of state, which owns the conventions' readers (issue 33 point 5).
func TestCLIKnowsNoConvention(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{range .Imports}}{{.}} {{end}}`, "./cli").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		switch imp {
		case "runwatch/state/envfile", "runwatch/state/jonggrang", "runwatch/state/resumable":
			t.Errorf("cli imports %s: ask state for what it needs of a run's files", imp)
		}
	}
}
