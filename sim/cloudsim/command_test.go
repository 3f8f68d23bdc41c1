package cloudsim

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCommandServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := NewCommand()
	out := &syncBuffer{}
	cmd.SetOut(out)
	cmd.SetArgs([]string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "cloud"), "--boot-delay", "0s", "--boot-jitter", "0s"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	var url string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the command printed no URL: %q", out.String())
		}
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				url, _, _ = strings.Cut(rest, " ")
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %s", resp.Status)
	}
	want := "simulated cloud: local face at " + url + "\n"
	for i := 0; i < 500 && !strings.Contains(out.String(), want); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), want) {
		t.Fatalf("the command did not print where the local face listens (%q): %q", want, out.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("command: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the command did not stop")
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
