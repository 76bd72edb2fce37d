package envfile

import (
	"os"
	"path/filepath"
	"testing"
)

func sphinxState(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "opencode", "reports",
		"sphinx-traceability-migration-20260214T184350Z", "state.env"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParseStateEnv(b *testing.B) {
	data := sphinxState(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSetAndBytes(b *testing.B) {
	data := sphinxState(b)
	for b.Loop() {
		f, _ := Parse(data)
		f.Set("M4_DONE", "1")
		f.Set("CURRENT_STAGE", "M5")
		_ = f.Bytes()
	}
}
