package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/serve"
)

func init() { addCommand(newServeCmd) }

type serveFlags struct {
	addr, tokenEnv, runs      string
	allowedHosts, allowedOrig []string
	maxRunning                int
	evals                     string
	webhook, webhookSecretEnv string
}

func newServeCmd() *cobra.Command {
	var f agentFlags
	var sf serveFlags
	c := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--token-env NAME] [--evals DIR] [--webhook URL --webhook-secret-env NAME] [run flags | --agent FILE]",
		Short: "Serve the agent over HTTP: runs, approvals, traces, evals, sessions and the plugins directory",
		Long: `Serve the agent the run flags (or --agent FILE) describe as a JSON API,
described at /openapi.json:

  POST /v1/runs {"prompt", "background"}        start a run: {"id"}
  GET  /v1/runs, /v1/runs/{id}                  status, pending calls, result
  POST /v1/runs/{id}/decisions                  approve or reject paused calls
  POST /v1/runs/{id}/cancel
  GET  /v1/runs/{id}/events                     Server-Sent Events (Last-Event-ID)
  GET  /v1/runs/{id}/trace                      trace events and their summary
  POST /v1/evals {"file"} or {"cases"}          run an eval: {"id"}   (--evals DIR)
  GET  /v1/evals, /v1/evals/{id}, /v1/evals/{id}/report.html
  GET  /v1/sessions, /v1/sessions/{user}/{name}; POST .../runs   (--sessions)
  GET  /v1/tools, /v1/tools/{file}, /v1/tools/verify; POST /v1/tools/{file}/approve,
       /v1/tools/{name}/revoke

Runs are kept in --runs DIR: a run paused for approval is decided after a
restart, and one that was going when the server died is listed as
interrupted, with its transcript.

Security: loopback (127.0.0.1:8080) by default, where a client needs no
token. Any other address needs --token-env NAME: the variable holds tokens
ROLE:NAME:SECRET separated by commas, ROLE one of viewer (reads), runner
(starts and cancels runs) or operator (decides calls, approves modules);
NAME is recorded as "by" in the audit logs; a SECRET has 16 bytes or more.
Clients send Authorization: Bearer SECRET. Host headers other than IP
addresses and localhost are refused (DNS rebinding) unless --allowed-host
names them; browser origins other than the server's unless --allowed-origin.

Evals: POST /v1/evals runs a case file of --evals DIR (named relative to
it; nothing outside it is read, the cases' scripts included) or cases given
inline; reports are kept in --runs DIR/evals.

Notifications: with --webhook URL, the server POSTs {"id", "type", "time",
"run"} when a run awaits a decision (type run.awaiting_approval) and when it
ends (run.ended), signed with the secret in the variable --webhook-secret-env
names (16 bytes or more):
  X-Autoagent-Timestamp: UNIX-SECONDS
  X-Autoagent-Signature: sha256=HEX(HMAC-SHA256(SECRET, TIMESTAMP "." BODY))
Check the signature and refuse old timestamps (replays). Deliveries are
retried on errors, 429 and 5xx; they never hold up a run: over the queue's
bound they are dropped and noted on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServe(c, &f, sf)
		},
	}
	f.register(c.Flags())
	fl := c.Flags()
	fl.StringVar(&sf.addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT; other than loopback needs --token-env")
	fl.StringVar(&sf.tokenEnv, "token-env", "", "environment variable holding the tokens: ROLE:NAME:SECRET,... (ROLE viewer|runner|operator)")
	fl.StringVar(&sf.runs, "runs", "runs", "directory keeping the runs (a directory each: record, events, checkpoint) and the audit log of decisions (audit.jsonl)")
	fl.StringVar(&f.sessions, "sessions", "", "the session store (an SQLite file) to serve and continue (default: none)")
	fl.StringArrayVar(&sf.allowedHosts, "allowed-host", nil, "a Host name clients may use besides IP addresses and localhost (repeatable)")
	fl.StringArrayVar(&sf.allowedOrig, "allowed-origin", nil, "a browser origin (scheme://host:port) allowed besides the server's own (repeatable)")
	fl.IntVar(&sf.maxRunning, "max-running", 0, "runs going at once; others wait their turn (default 32)")
	fl.StringVar(&sf.evals, "evals", "", "directory of the case files POST /v1/evals may run (default: none; inline cases only)")
	fl.StringVar(&sf.webhook, "webhook", "", "URL notified (signed POST) when a run awaits a decision and when it ends")
	fl.StringVar(&sf.webhookSecretEnv, "webhook-secret-env", "", "environment variable holding the webhook's signing secret (16 bytes or more; required with --webhook)")
	return c
}

func runServe(c *cobra.Command, f *agentFlags, sf serveFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(sf.addr); err != nil {
		return usageError(fmt.Errorf("--addr %q: want HOST:PORT, e.g. 127.0.0.1:8080", sf.addr))
	}
	if sf.maxRunning < 0 {
		return usageError(fmt.Errorf("--max-running must be 0 or more, got %d", sf.maxRunning))
	}
	var tokens []serve.Token
	if sf.tokenEnv != "" {
		v, ok := os.LookupEnv(sf.tokenEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return usageError(fmt.Errorf("--token-env %s: the variable is not set or empty (want ROLE:NAME:SECRET,...)", sf.tokenEnv))
		}
		var err error
		if tokens, err = serve.ParseTokens(v); err != nil {
			return usageError(fmt.Errorf("--token-env %s: %v", sf.tokenEnv, err))
		}
	}
	hook, err := sf.webhookOptions()
	if err != nil {
		return err
	}
	if !serve.IsLoopback(sf.addr) && len(tokens) == 0 {
		return usageError(fmt.Errorf("--addr %s is not a loopback address: anyone who reaches it could run the agent and approve its calls; give --token-env NAME with tokens ROLE:NAME:SECRET", sf.addr))
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := f.newAgent(ctx, c.ErrOrStderr(), true)
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	h, err := serve.New(serve.Options{
		Agent: rt.Agent(), Sessions: rt.Sessions(), Plugins: rt.box.Dir(),
		Dir: sf.runs, Tokens: tokens, LocalName: defaultApprover(), AllowedHosts: sf.allowedHosts, AllowedOrigins: sf.allowedOrig,
		MaxRunning: sf.maxRunning, Notes: c.ErrOrStderr(),
		EvalDir: sf.evals, EvalAgent: evalAgentOf(rt.Agent(), f.provider == "scripted"), Webhook: hook,
	})
	if err != nil {
		if errors.Is(err, serve.ErrOptions) || errors.Is(err, serve.ErrTokens) {
			return usageError(err)
		}
		return err
	}
	ln, err := net.Listen("tcp", sf.addr)
	if err != nil {
		h.Close()
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	fmt.Fprintf(c.ErrOrStderr(), "autoagent serve: listening on http://%s (runs in %s; API at /openapi.json)\n", ln.Addr(), sf.runs)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	// Runs still going are saved as interrupted; streams end.
	cerr := h.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, cerr)
}

// webhookOptions reads --webhook and its secret's variable.
func (sf serveFlags) webhookOptions() (serve.Webhook, error) {
	switch {
	case sf.webhook == "" && sf.webhookSecretEnv == "":
		return serve.Webhook{}, nil
	case sf.webhook == "":
		return serve.Webhook{}, usageError(fmt.Errorf("--webhook-secret-env %s without --webhook URL", sf.webhookSecretEnv))
	case sf.webhookSecretEnv == "":
		return serve.Webhook{}, usageError(fmt.Errorf("--webhook %s needs --webhook-secret-env NAME: notifications are always signed", sf.webhook))
	}
	secret, ok := os.LookupEnv(sf.webhookSecretEnv)
	if !ok || secret == "" {
		return serve.Webhook{}, usageError(fmt.Errorf("--webhook-secret-env %s: the variable is not set or empty (e.g. export %s=$(openssl rand -hex 32))", sf.webhookSecretEnv, sf.webhookSecretEnv))
	}
	return serve.Webhook{URL: sf.webhook, Secret: secret}, nil
}
