package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
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
	if rec.Header().Get("Retry-After") == "" {
		t.Fatal("the timeout 503 carries no Retry-After")
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

// TestTimeoutAnswerBegunIsTheHandlers: an answer begun before the deadline is the handler's to
// end (its context ends at the deadline); a handler that had not begun gets the timeout body and
// its later writes fail; a handler that writes nothing answers 200 with its own headers.
func TestTimeoutAnswerBegunIsTheHandlers(t *testing.T) {
	begun := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusAccepted)
		<-r.Context().Done()
		_, _ = w.Write([]byte("late"))
	})
	rec := httptest.NewRecorder()
	withTimeout(begun, 20*time.Millisecond).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/audit", nil))
	if rec.Code != http.StatusAccepted || rec.Body.String() != "late" || rec.Header().Get("Content-Type") != "text/plain" {
		t.Fatalf("begun answer: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}

	wrote := make(chan error, 1)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		time.Sleep(10 * time.Millisecond) // the timeout body goes first
		_, err := w.Write([]byte("too late"))
		wrote <- err
	})
	rec = httptest.NewRecorder()
	withTimeout(slow, 20*time.Millisecond).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/audit", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != timeoutBody {
		t.Fatalf("timed out: %d %q", rec.Code, rec.Body.String())
	}
	if err := <-wrote; err != http.ErrHandlerTimeout {
		t.Fatalf("a write after the timeout gave %v", err)
	}

	silent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Seen", "1") })
	rec = httptest.NewRecorder()
	withTimeout(silent, time.Second).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("X-Seen") != "1" || rec.Body.Len() != 0 {
		t.Fatalf("silent handler: %d %q %q", rec.Code, rec.Header().Get("X-Seen"), rec.Body.String())
	}
}

// TestTimeoutPanicReachesTheServer: a handler's panic is raised again where net/http recovers it.
func TestTimeoutPanicReachesTheServer(t *testing.T) {
	boom := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Fatalf("recovered %v", p)
		}
	}()
	withTimeout(boom, time.Second).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	t.Fatal("no panic")
}

// TestTimeoutWriterFlushes: a handler behind the timeout, inside Echo, can flush (an MCP answer
// may stream): the status and headers go first and the flush reaches the client; after the
// deadline a flush fails instead of sending. Without it Echo's flush panics.
func TestTimeoutWriterFlushes(t *testing.T) {
	e := echo.New()
	e.POST("/stream", func(c echo.Context) error {
		c.Response().Header().Set("Content-Type", "text/event-stream")
		c.Response().Flush()
		_, err := c.Response().Write([]byte("data: 1\n\n"))
		return err
	})
	rec := httptest.NewRecorder()
	withTimeout(e, time.Second).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/stream", nil))
	if !rec.Flushed || rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" || rec.Body.String() != "data: 1\n\n" {
		t.Fatalf("flushed %v, %d %q %q", rec.Flushed, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	late := make(chan error, 1)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		time.Sleep(10 * time.Millisecond) // the timeout body has gone by now
		late <- http.NewResponseController(w).Flush()
	})
	rec = httptest.NewRecorder()
	withTimeout(slow, 20*time.Millisecond).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/audit", nil))
	if err := <-late; err == nil || rec.Body.String() != timeoutBody {
		t.Fatalf("a flush after the timeout: %v, body %q", err, rec.Body.String())
	}
}
