package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTimeoutAnswersStaticJSON(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	rec := httptest.NewRecorder()
	withTimeout(slow, 20*time.Millisecond).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/audit", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != timeoutBody {
		t.Fatalf("timeout answered %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	text := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = w.Write([]byte("NOT COVERED"))
	})
	rec = httptest.NewRecorder()
	withTimeout(text, time.Second).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", nil))
	if rec.Header().Get("Content-Type") != "text/plain; charset=UTF-8" {
		t.Fatalf("a handler's own content type must win, got %q", rec.Header().Get("Content-Type"))
	}
}
