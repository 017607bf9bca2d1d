package serve_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

// 1 000 background runs started through the API at once all complete:
// none lost, none left running. Bounded by the work, not by time.
func TestThousandBackgroundRunsAllComplete(t *testing.T) {
	const runs = 1000
	e := newEnv(t, serve.Options{Dir: t.TempDir()}, scriptOf(call("shout", `{"text":"x"}`), scripted.Turn{Text: "ok"}))
	ids := make(chan string, runs)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < runs; i += 16 {
				r := e.do("POST", "/v1/runs", fmt.Sprintf(`{"prompt": "run %d", "background": true}`, i))
				if r.status != http.StatusAccepted {
					t.Errorf("start %d: %d %s", i, r.status, r.raw)
					return
				}
				ids <- r.body["id"].(string)
			}
		}()
	}
	wg.Wait()
	close(ids)
	if t.Failed() {
		return
	}
	want := map[string]bool{}
	for id := range ids {
		want[id] = true
	}
	if len(want) != runs {
		t.Fatalf("%d distinct ids for %d runs", len(want), runs)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		list := e.must(http.StatusOK, "GET", "/v1/runs", "")
		done, other := 0, map[string]int{}
		for _, r := range list.body["runs"].([]any) {
			m := r.(map[string]any)
			if !want[m["id"].(string)] {
				t.Fatalf("a run nobody started: %v", m)
			}
			if m["status"] == "completed" {
				done++
			} else {
				other[m["status"].(string)]++
			}
		}
		if done == runs {
			break
		}
		if other["failed"]+other["cancelled"]+other["interrupted"]+other["awaiting_approval"] > 0 || time.Now().After(deadline) {
			t.Fatalf("%d of %d completed; others: %v", done, runs, other)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Each one's result is its own.
	for id := range want {
		run := e.must(http.StatusOK, "GET", "/v1/runs/"+id, "").body
		res := run["result"].(map[string]any)
		if res["output"] != "ok" || !strings.Contains(fmt.Sprint(res["messages"]), run["prompt"].(string)) {
			t.Fatalf("run %s: %v", id, run)
		}
	}
}

// BenchmarkSSE100Streams: 100 runs stream their answers at once, each
// watched by an SSE client; reported: the delay from an event's emission
// (its time) to its arrival at the client, p50 and p99.
func BenchmarkSSE100Streams(b *testing.B) {
	const streams = 100
	text := strings.Repeat("word ", 40)
	model := scripted.NewWithOptions(scripted.Options{PerConversation: true, ForgetRequests: true, ChunkSize: 5, ChunkDelay: 5 * time.Millisecond}, scripted.Turn{Text: text})
	s, err := serve.New(serve.Options{Agent: newAgent(b, model, newGate()), MaxRunning: streams})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hs := newServer(s)
	defer hs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * streams, MaxConnsPerHost: 0}}
	var delays []time.Duration
	var mu sync.Mutex
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Post(hs.URL+"/v1/runs", "application/json", strings.NewReader(`{"prompt": "talk", "background": true}`))
				if err != nil {
					b.Error(err)
					return
				}
				var started struct{ ID string }
				json.NewDecoder(resp.Body).Decode(&started)
				resp.Body.Close()
				resp, err = client.Get(hs.URL + "/v1/runs/" + started.ID + "/events")
				if err != nil {
					b.Error(err)
					return
				}
				defer resp.Body.Close()
				connected := time.Now()
				var local []time.Duration
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					data, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok {
						continue
					}
					arrived := time.Now()
					var ev struct{ Time time.Time }
					if json.Unmarshal([]byte(data), &ev) == nil && ev.Time.After(connected) {
						local = append(local, arrived.Sub(ev.Time))
					}
				}
				mu.Lock()
				delays = append(delays, local...)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	if len(delays) == 0 {
		b.Fatal("no event arrived after its stream connected")
	}
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(delays))/float64(b.N), "events/op")
}

// BenchmarkRunReads200rps reads runs (GET /v1/runs/{id}, 100 runs kept
// in a directory) at a steady 200 requests a second, open loop: each
// request leaves at its scheduled time whatever the others do, and its
// latency counts from that time, so a slow answer delays none after it
// unmeasured. Reported: p50 and p99 latency, and the rate achieved.
// Run with -benchtime=2000x (10 s) or more for a p99 of substance.
func BenchmarkRunReads200rps(b *testing.B) {
	const rate = 200
	s, err := serve.New(serve.Options{Agent: newAgent(b, scriptOf(call("shout", `{"text":"x"}`), scripted.Turn{Text: "ok"}), newGate()), Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hs := newServer(s)
	defer hs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var ids []string
	for i := range 100 {
		resp, err := client.Post(hs.URL+"/v1/runs", "application/json", strings.NewReader(fmt.Sprintf(`{"prompt": "run %d"}`, i)))
		if err != nil {
			b.Fatal(err)
		}
		var run struct{ ID, Status string }
		json.NewDecoder(resp.Body).Decode(&run)
		resp.Body.Close()
		if run.Status != "completed" {
			b.Fatalf("run %d: %+v", i, run)
		}
		ids = append(ids, run.ID)
	}
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		due := start.Add(time.Duration(i) * time.Second / rate)
		time.Sleep(time.Until(due))
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(hs.URL + "/v1/runs/" + ids[i%len(ids)])
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat[i] = time.Since(due)
			if resp.StatusCode != http.StatusOK {
				b.Errorf("read %d: %d", i, resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}
