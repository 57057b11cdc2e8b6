package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func kueueConfigMap(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kueue-manager-config","namespace":"kueue-system"},`+
		`"data":{"controller_manager_config.yaml":"apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"}}`)
}

// A read that the process shares (here Kueue's configuration) and whose first caller was
// cancelled before the cluster answered is read again by the next caller: the cancelled
// caller's error is its own, not the cluster's answer for the whole process.
func TestASharedReadOfACancelledCallerIsReadAgain(t *testing.T) {
	client, a := serve(t, kueueConfigMap)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := client.KueueConfig(cancelled); err == nil {
		t.Fatal("a cancelled caller read Kueue's configuration")
	}
	cfg, err := client.KueueConfig(context.Background())
	if err != nil || cfg == nil {
		t.Fatalf("the next caller: %v, %v; want the configuration the cluster serves", cfg, err)
	}
	if _, err := client.KueueConfig(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := a.requests.Load(); n != 1 {
		t.Errorf("the cluster was asked %d times; want once, by the caller that was not cancelled", n)
	}
}

// Callers of one key share its read: a value is read once; an error answers the callers for
// the life of a failed read, and the first caller after it reads again.
func TestASharedReadIsReadOnceAndAFailedOneAgainAfterItsLife(t *testing.T) {
	var s shared[string, int]
	reads := 0
	read := func(answer error) func(context.Context) (int, error) {
		return func(context.Context) (int, error) {
			reads++
			if answer != nil {
				return 0, answer
			}
			return 42, nil
		}
	}
	for range 3 {
		if v, err := s.get(context.Background(), "ok", read(nil)); v != 42 || err != nil {
			t.Fatalf("got %d, %v", v, err)
		}
	}
	if reads != 1 {
		t.Errorf("a value was read %d times; want once", reads)
	}

	reads = 0
	s.failedReadLife = time.Hour
	refused := errors.New("refused")
	for range 3 {
		if _, err := s.get(context.Background(), "failing", read(refused)); !errors.Is(err, refused) {
			t.Fatalf("got %v; want the read's error", err)
		}
	}
	if reads != 1 {
		t.Errorf("a failed read was read %d times within its life; want once", reads)
	}
	s.failedReadLife = time.Nanosecond
	time.Sleep(time.Millisecond)
	if v, err := s.get(context.Background(), "failing", read(nil)); v != 42 || err != nil {
		t.Errorf("after its life, got %d, %v; want the new read's value", v, err)
	}
}

// A caller that waits on another's read gets what it read; when that caller is cancelled
// before the cluster answers, the waiting caller reads itself.
func TestACallerWaitingOnACancelledReadReadsItself(t *testing.T) {
	var s shared[string, int]
	started, release := make(chan struct{}), make(chan struct{})
	first, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.get(first, "k", func(ctx context.Context) (int, error) {
			close(started)
			<-release
			return 0, ctx.Err()
		})
		done <- err
	}()
	<-started
	waiter := make(chan int)
	go func() {
		v, _ := s.get(context.Background(), "k", func(context.Context) (int, error) { return 7, nil })
		waiter <- v
	}()
	cancel()
	close(release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v", err)
	}
	if v := <-waiter; v != 7 {
		t.Errorf("the waiting caller got %d; want its own read's 7", v)
	}
}
