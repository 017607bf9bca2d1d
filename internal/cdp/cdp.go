// Package cdp drives a headless Chromium over the DevTools protocol, for
// tests that need a real browser (the serve console's).
//
// It speaks the protocol over --remote-debugging-pipe: JSON messages, each
// ended by a NUL byte, on the browser's file descriptors 3 (commands in)
// and 4 (replies and events out). No WebSocket, no dependency.
//
//	b, err := cdp.Start(ctx, "/usr/bin/chromium", t.TempDir())
//	p, err := b.NewPage(ctx)
//	err = p.Navigate(ctx, srv.URL)
//	err = p.WaitFor(ctx, `document.querySelector("h1") !== null`)
//
// Assertions read the DOM through Eval; WaitFor polls a condition, so a
// test waits for what it expects and never sleeps.
package cdp

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Browser is a running Chromium. Close it.
type Browser struct {
	cmd    *exec.Cmd
	in     *os.File // the browser's fd 3
	stderr tail

	mu      sync.Mutex
	next    int64
	waiting map[int64]chan message
	logs    map[string][]string // per session: errors the page logged
	done    chan struct{}
	err     error
}

// tail keeps the last bytes the browser wrote to stderr, for errors. It is
// written by exec's copier while the reader may quote it: locked.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 64<<10; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start starts Chromium headless, with its profile in dir (a fresh
// directory: nothing of the user's).
func Start(ctx context.Context, bin, dir string) (*Browser, error) {
	cmdIn, ourOut, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ourIn, cmdOut, err := os.Pipe()
	if err != nil {
		cmdIn.Close()
		ourOut.Close()
		return nil, err
	}
	b := &Browser{in: ourOut, waiting: map[int64]chan message{}, logs: map[string][]string{}, done: make(chan struct{})}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
		"--disable-background-networking", "--disable-component-update", "--metrics-recording-only",
		"--hide-scrollbars", "--mute-audio", "--window-size=1280,900",
		"--remote-debugging-pipe", "--user-data-dir="+dir, "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		cmdIn.Close()
		cmdOut.Close()
		ourIn.Close()
		ourOut.Close()
		return nil, fmt.Errorf("cdp: start %s: %w", bin, err)
	}
	cmdIn.Close()
	cmdOut.Close()
	go b.read(ourIn)
	// The first answer proves the pipe works.
	var v struct {
		Product string `json:"product"`
	}
	if err := b.Call(ctx, "", "Browser.getVersion", nil, &v); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Browser) read(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var line []byte
		line, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m message
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.waiting[m.ID]; ch != nil {
				delete(b.waiting, m.ID)
				ch <- m
			}
		} else if s := pageError(m); s != "" {
			b.logs[m.SessionID] = append(b.logs[m.SessionID], s)
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.err = fmt.Errorf("cdp: the browser's pipe closed (%v); its stderr:\n%s", err, b.stderr.String())
	b.mu.Unlock()
	close(b.done)
}

// pageError is the text of an event that reports an error in the page:
// an uncaught exception, console.error, or a browser log entry of level
// error (a Content-Security-Policy violation is one).
func pageError(m message) string {
	switch m.Method {
	case "Runtime.exceptionThrown":
		var p struct {
			Details struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		json.Unmarshal(m.Params, &p)
		return "exception: " + p.Details.Text + " " + p.Details.Exception.Description
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Type != "error" {
			return ""
		}
		var parts []string
		for _, a := range p.Args {
			parts = append(parts, fmt.Sprint(a.Value), a.Description)
		}
		return "console.error: " + strings.Join(parts, " ")
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level  string `json:"level"`
				Source string `json:"source"`
				Text   string `json:"text"`
			} `json:"entry"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Entry.Level != "error" {
			return ""
		}
		return "log (" + p.Entry.Source + "): " + p.Entry.Text
	}
	return ""
}

// Call sends method with params to the browser (session "") or a page's
// session, and decodes the result into result (when not nil).
func (b *Browser) Call(ctx context.Context, session, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan message, 1)
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return err
	}
	b.next++
	id := b.next
	b.waiting[id] = ch
	msg, _ := json.Marshal(message{ID: id, Method: method, Params: p, SessionID: session})
	_, err = b.in.Write(append(msg, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("cdp: %s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.done:
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.err
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	}
}

// Close stops the browser and waits for it to exit.
func (b *Browser) Close() error {
	b.in.Close() // the browser exits when its command pipe closes
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-exited
	}
	return nil
}

// Page is a browser tab, attached.
type Page struct {
	b       *Browser
	session string
}

// NewPage opens a tab on about:blank and attaches to it, with the
// runtime and log domains on (so the page's errors are kept: Errors).
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return nil, err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &a); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: a.SessionID}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if err := b.Call(ctx, p.session, m, nil, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Errors returns the errors the page reported so far: exceptions,
// console.error calls, and log entries of level error.
func (p *Page) Errors() []string {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return append([]string(nil), p.b.logs[p.session]...)
}

// Navigate loads url and waits until its document is complete.
func (p *Page) Navigate(ctx context.Context, url string) error {
	var r struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.Call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &r); err != nil {
		return err
	}
	if r.ErrorText != "" {
		return fmt.Errorf("cdp: navigate %s: %s", url, r.ErrorText)
	}
	return p.WaitFor(ctx, `document.readyState === "complete" && location.href !== "about:blank"`)
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value into out (when not nil).
func (p *Page) Eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.Call(ctx, p.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true, "userGesture": true,
	}, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("cdp: %s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

// ErrTimeout is wrapped by WaitFor when ctx ends before the condition
// holds.
var ErrTimeout = errors.New("cdp: condition not met")

// WaitFor polls cond, a JavaScript expression, until it is true or ctx
// ends. The error then quotes the page's text, to show what it showed.
func (p *Page) WaitFor(ctx context.Context, cond string) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		var ok bool
		lastErr = p.Eval(ctx, "!!("+cond+")", &ok)
		if lastErr == nil && ok {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			var text string
			p.Eval(context.Background(), `document.body ? document.body.innerText : ""`, &text)
			if len(text) > 2000 {
				text = text[:2000] + "…"
			}
			return fmt.Errorf("%w: %s (last error: %v); the page shows:\n%s", ErrTimeout, cond, lastErr, text)
		}
	}
}

// Key presses and releases a key (a DOM key name: "Tab", "Enter", " ")
// as the keyboard would, on the focused element.
func (p *Page) Key(ctx context.Context, key string) error {
	code, text, vk := key, "", 0
	switch key {
	case "Enter":
		text, vk = "\r", 13
	case "Tab":
		vk = 9
	case " ":
		code, text, vk = "Space", " ", 32
	case "Escape":
		vk = 27
	}
	down := map[string]any{"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
	if text != "" {
		down["text"] = text
	}
	if err := p.b.Call(ctx, p.session, "Input.dispatchKeyEvent", down, nil); err != nil {
		return err
	}
	return p.b.Call(ctx, p.session, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}, nil)
}

// Type types text into the focused element, as keystrokes would.
func (p *Page) Type(ctx context.Context, text string) error {
	return p.b.Call(ctx, p.session, "Input.insertText", map[string]any{"text": text}, nil)
}

// Screenshot writes the page, as shown, to path as PNG.
func (p *Page) Screenshot(ctx context.Context, path string) error {
	var r struct {
		Data string `json:"data"`
	}
	if err := p.b.Call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &r); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}
