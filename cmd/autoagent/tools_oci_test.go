package main

import (
	"crypto/elliptic"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/autoagent-go/autoagent/internal/registrytest"
	"github.com/autoagent-go/autoagent/internal/sigstoretest"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/oci"
)

// ociEnv is a CLI environment with a registry on loopback, a key pair
// and a signers file trusting it for REGISTRY/tools/*.
type ociEnv struct {
	*cliEnv
	reg *registrytest.Registry
	key string // the private key's path
}

func newOCIEnv(t *testing.T) *ociEnv {
	e := &ociEnv{cliEnv: newCLIEnv(t), reg: registrytest.Start(t)}
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no user credentials
	t.Setenv("COSIGN_PASSWORD", "")
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.SkipPassword)
	if err != nil {
		t.Fatal(err)
	}
	e.key = filepath.Join(e.root, "cosign.key")
	if err := os.WriteFile(e.key, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.plugins, "alice.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	signers, _ := json.Marshal(map[string]any{"version": 1, "signers": []map[string]any{
		{"name": "alice", "key": "alice.pub", "references": []string{e.reg.Host + "/tools/*"}},
	}})
	if err := os.WriteFile(filepath.Join(e.plugins, oci.SignersFile), signers, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// snapshot is the plugins directory's file names and contents.
func (e *ociEnv) snapshot() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(e.plugins)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range entries {
		data, err := os.ReadFile(filepath.Join(e.plugins, d.Name()))
		if err != nil {
			e.t.Fatal(err)
		}
		out[d.Name()] = string(data)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestToolsPushSignPullApprove(t *testing.T) {
	e := newOCIEnv(t)
	ref := e.reg.Host + "/tools/echo:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), ref, "--plain-http")
	e.mustRun(0, "tools", "sign", ref, "--key", e.key, "--plain-http")
	r := e.mustRun(0, "tools", "pull", ref, "--plain-http")
	if !strings.Contains(r.stdout, "pending") || !strings.Contains(r.stdout, "signer:    alice (key sha256:") {
		t.Fatalf("pull said:\n%s", r.stdout)
	}
	path := filepath.Join(e.plugins, "echo.wasm")
	if sha256Hex(t, path) != sha256Hex(t, filepath.Join(e.testdata, "echo.wasm")) {
		t.Fatal("the pulled module's bytes differ from those pushed")
	}
	// Pending: the pull approved nothing, and the audit log says who pulled.
	if e.loadManifest().Len() != 0 {
		t.Fatal("the pull approved something")
	}
	logData, _ := os.ReadFile(filepath.Join(e.plugins, "manifest.log.jsonl"))
	if !strings.Contains(string(logData), `"action":"pull"`) || strings.Contains(string(logData), `"unsigned":true`) {
		t.Fatalf("audit log:\n%s", logData)
	}
	r = e.mustRun(0, "tools", "approve", path, "--yes")
	if !strings.Contains(r.stdout, "source:    "+ref) {
		t.Fatalf("approve did not show the source:\n%s", r.stdout)
	}
	es := e.loadManifest().Entries()
	if len(es) != 1 || es[0].Source.Reference != ref || !strings.HasPrefix(es[0].Source.Digest, "sha256:") || !strings.HasPrefix(es[0].Source.Signer, "alice (key sha256:") {
		t.Fatalf("approval's source: %+v", es)
	}
	r = e.mustRun(0, "tools", "inspect", path)
	if !strings.Contains(r.stdout, "source:    "+ref) || !strings.Contains(r.stdout, "signer:    alice") {
		t.Fatalf("inspect:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "list")
	if !strings.Contains(r.stdout, "from "+ref) {
		t.Fatalf("list:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "verify")
	if !strings.Contains(r.stdout, "1 pulled modules' signatures verify") {
		t.Fatalf("verify:\n%s", r.stdout)
	}
	// The signer's key no longer trusted for the reference: verify fails.
	signers := filepath.Join(e.plugins, oci.SignersFile)
	data, _ := os.ReadFile(signers)
	os.WriteFile(signers, []byte(strings.Replace(string(data), "/tools/*", "/other/*", 1)), 0o644)
	r = e.mustRun(1, "tools", "verify")
	if !strings.Contains(r.stdout, "signature:") || !strings.Contains(r.stdout, "trusts it only for") {
		t.Fatalf("verify with the key untrusted:\n%s\n%s", r.stdout, r.stderr)
	}
}

func TestToolsPullRefusalsLeaveDirUnchanged(t *testing.T) {
	e := newOCIEnv(t)
	signed := e.reg.Host + "/tools/echo:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), signed, "--plain-http")
	e.mustRun(0, "tools", "sign", signed, "--key", e.key, "--plain-http")
	unsigned := e.reg.Host + "/tools/fetch:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "fetch.wasm"), unsigned, "--plain-http")
	elsewhere := e.reg.Host + "/elsewhere/echo:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), elsewhere, "--plain-http")
	e.mustRun(0, "tools", "sign", elsewhere, "--key", e.key, "--plain-http")

	before := e.snapshot()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing tag", []string{e.reg.Host + "/tools/echo:9"}, "no such tag"},
		{"unsigned", []string{unsigned}, "no cosign signature"},
		{"untrusted for the reference", []string{elsewhere}, "trusts it only for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.mustRun(1, append(append([]string{"tools", "pull"}, tc.args...), "--plain-http")...)
			if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "unchanged") {
				t.Fatalf("stderr:\n%s", r.stderr)
			}
			if !sameFiles(before, e.snapshot()) {
				t.Fatal("the plugins directory changed")
			}
		})
	}
	// --allow-unsigned takes it, pending, and the audit log records it.
	r := e.mustRun(0, "tools", "pull", unsigned, "--plain-http", "--allow-unsigned")
	if !strings.Contains(r.stderr, "unverified") {
		t.Fatalf("no warning:\n%s", r.stderr)
	}
	logData, _ := os.ReadFile(filepath.Join(e.plugins, "manifest.log.jsonl"))
	if !strings.Contains(string(logData), `"unsigned":true`) {
		t.Fatalf("audit log:\n%s", logData)
	}
	// A registry that is down: nothing written either.
	before = e.snapshot()
	e.reg.Close()
	r = e.mustRun(1, "tools", "pull", signed, "--plain-http")
	if !strings.Contains(r.stderr, "is the registry up") || !sameFiles(before, e.snapshot()) {
		t.Fatalf("registry down: %s", r.stderr)
	}
}

func TestToolsUpdateShowsNewRequestKeepsPending(t *testing.T) {
	e := newOCIEnv(t)
	ref := e.reg.Host + "/tools/echo:stable"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), ref, "--plain-http")
	e.mustRun(0, "tools", "sign", ref, "--key", e.key, "--plain-http")
	e.mustRun(0, "tools", "pull", ref, "--plain-http")
	path := filepath.Join(e.plugins, "echo.wasm")
	e.mustRun(0, "tools", "approve", path, "--yes")
	oldSum := sha256Hex(t, path)

	r := e.mustRun(0, "tools", "update", "--plain-http")
	if !strings.Contains(r.stdout, "up to date") {
		t.Fatalf("update with nothing new:\n%s", r.stdout)
	}
	// A new version under the same tag asks for the network.
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "fetch.wasm"), ref, "--plain-http")
	e.mustRun(0, "tools", "sign", ref, "--key", e.key, "--plain-http")
	r = e.mustRun(0, "tools", "update", "echo", "--plain-http")
	if !strings.Contains(r.stdout, "NEW REQUEST: net:example.com") || !strings.Contains(r.stdout, "moved from") {
		t.Fatalf("update:\n%s", r.stdout)
	}
	newSum := sha256Hex(t, path)
	if newSum == oldSum {
		t.Fatal("update did not pull the new bytes")
	}
	m := e.loadManifest()
	if _, ok := m.Lookup(newSum); ok {
		t.Fatal("update approved the new version")
	}
	if _, ok := m.Lookup(oldSum); !ok {
		t.Fatal("update dropped the old approval")
	}
	r = e.mustRun(0, "tools", "inspect", path)
	if !strings.Contains(r.stdout, "status:    pending") {
		t.Fatalf("inspect after update:\n%s", r.stdout)
	}
	// Approve shows the difference against the approved version.
	r = e.run("", "tools", "approve", path, "--yes")
	if !strings.Contains(r.stdout, "NEW REQUEST: net:example.com") {
		t.Fatalf("approve:\n%s", r.stdout)
	}
}

// TestToolsApproveRefusesForgedRecord: a provenance record rewritten to
// name other bytes (a signed pull's record beside a copied-in module)
// is refused, not recorded as the module's source and signer.
func TestToolsApproveRefusesForgedRecord(t *testing.T) {
	e := newOCIEnv(t)
	ref := e.reg.Host + "/tools/echo:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), ref, "--plain-http")
	e.mustRun(0, "tools", "sign", ref, "--key", e.key, "--plain-http")
	e.mustRun(0, "tools", "pull", ref, "--plain-http")
	path := filepath.Join(e.plugins, "echo.wasm")
	other, err := os.ReadFile(filepath.Join(e.testdata, "fetch.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(e.plugins, oci.SourceFile("echo.wasm"))
	data, _ := os.ReadFile(recPath)
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec["sha256"] = sha256Hex(t, path)
	data, _ = json.Marshal(rec)
	os.WriteFile(recPath, data, 0o644)
	r := e.mustRun(1, "tools", "approve", path, "--yes", "--grant", "net:example.com")
	if !strings.Contains(r.stderr, "does not verify") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	if e.loadManifest().Len() != 0 {
		t.Fatal("approved with a forged record")
	}
}

// TestToolsKeylessPullApproveVerify: a module signed keyless (a Sigstore
// bundle attached as cosign attaches it) pulls with --trusted-root,
// approve and verify re-check it offline, and the approval records the
// identity the certificate named; without the root, or by another
// identity, it is refused with the plugins directory unchanged.
func TestToolsKeylessPullApproveVerify(t *testing.T) {
	e := newOCIEnv(t)
	ss := sigstoretest.New(t)
	rootFile := filepath.Join(e.root, "sigstore-root.json") // not the default place
	ss.WriteRoot(rootFile, false)
	const issuer, subject = "https://token.actions.example.com", "https://git.example.com/org/tools/.github/workflows/release.yml@refs/tags/v1"
	signers, _ := json.Marshal(map[string]any{"version": 1, "signers": []map[string]any{
		{"name": "ci", "keyless": map[string]string{"issuer": issuer, "subject_regexp": `https://git\.example\.com/org/tools/.*`}, "references": []string{e.reg.Host + "/tools/*"}},
	}})
	if err := os.WriteFile(filepath.Join(e.plugins, oci.SignersFile), signers, 0o644); err != nil {
		t.Fatal(err)
	}
	push := func(name, tag, signedBy string) string {
		ref := e.reg.Host + "/tools/" + name + ":" + tag
		r := e.mustRun(0, "tools", "push", filepath.Join(e.testdata, name+".wasm"), ref, "--plain-http")
		_, after, _ := strings.Cut(r.stdout, "digest:    ")
		d, _, _ := strings.Cut(after, "\n")
		sigstoretest.Attach(t, e.reg.Host, "tools/"+name, d, ss.Sign(signedBy, issuer, sigstoretest.Statement(e.reg.Host+"/tools/"+name, d)))
		return ref
	}
	ref := push("echo", "1", subject)
	stranger := push("fetch", "1", "https://git.example.com/someone-else/x")

	before := e.snapshot()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no trusted root", []string{ref}, "--trusted-root"},
		{"another identity", []string{stranger, "--trusted-root", rootFile}, "was signed by subject https://git.example.com/someone-else/x"},
	} {
		r := e.mustRun(1, append(append([]string{"tools", "pull"}, tc.args...), "--plain-http")...)
		if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "unchanged") {
			t.Fatalf("%s: stderr:\n%s", tc.name, r.stderr)
		}
		if !sameFiles(before, e.snapshot()) {
			t.Fatalf("%s: the plugins directory changed", tc.name)
		}
	}

	want := "ci (keyless: subject " + subject + ", issuer " + issuer + ")"
	r := e.mustRun(0, "tools", "pull", ref, "--plain-http", "--trusted-root", rootFile)
	if !strings.Contains(r.stdout, "signer:    "+want) {
		t.Fatalf("pull said:\n%s", r.stdout)
	}
	path := filepath.Join(e.plugins, "echo.wasm")
	// Approve re-checks the record: without the root it cannot.
	r = e.mustRun(1, "tools", "approve", path, "--yes")
	if !strings.Contains(r.stderr, "trusted root") || e.loadManifest().Len() != 0 {
		t.Fatalf("approve without the root:\n%s", r.stderr)
	}
	e.mustRun(0, "tools", "approve", path, "--yes", "--trusted-root", rootFile)
	es := e.loadManifest().Entries()
	if len(es) != 1 || es[0].Source.Signer != want {
		t.Fatalf("approval's source: %+v", es)
	}
	r = e.mustRun(0, "tools", "inspect", path)
	if !strings.Contains(r.stdout, "signer:    "+want) {
		t.Fatalf("inspect:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "list", "--json")
	if !strings.Contains(r.stdout, `"signer": "`+want) && !strings.Contains(r.stdout, `"signer":"`+want) {
		t.Fatalf("list --json:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "verify", "--trusted-root", rootFile)
	if !strings.Contains(r.stdout, "1 pulled modules' signatures verify") {
		t.Fatalf("verify:\n%s", r.stdout)
	}
	// The root copied to its default place: no flag needed.
	data, _ := os.ReadFile(rootFile)
	os.WriteFile(filepath.Join(e.plugins, oci.TrustedRootFile), data, 0o644)
	e.mustRun(0, "tools", "verify")
	// The identity no longer trusted: verify fails, naming it.
	os.WriteFile(filepath.Join(e.plugins, oci.SignersFile), []byte(strings.Replace(string(signers), "org/tools", "org/other", 1)), 0o644)
	r = e.mustRun(1, "tools", "verify")
	if !strings.Contains(r.stdout, "signature:") || !strings.Contains(r.stdout, "was signed by subject "+subject) {
		t.Fatalf("verify with the identity untrusted:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestToolsImportPullsOCIAndHTTPS: a hyper-mcp config's oci:// plugin is
// pulled and verified as tools pull does, and its https:// plugin is
// downloaded only with --allow-unsigned; both land pending, recorded in
// the audit log, with the approve command proposed; stdout stays JSON.
func TestToolsImportPullsOCIAndHTTPS(t *testing.T) {
	e := newOCIEnv(t)
	ref := e.reg.Host + "/tools/echo:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), ref, "--plain-http")
	e.mustRun(0, "tools", "sign", ref, "--key", e.key, "--plain-http")
	unsignedRef := e.reg.Host + "/tools/unsigned:1"
	e.mustRun(0, "tools", "push", filepath.Join(e.testdata, "echo.wasm"), unsignedRef, "--plain-http")

	fetchWasm, err := os.ReadFile(filepath.Join(e.testdata, "fetch.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/fetch.wasm", func(w http.ResponseWriter, _ *http.Request) { w.Write(fetchWasm) })
	mux.HandleFunc("/downgrade.wasm", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/fetch.wasm", http.StatusFound)
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	saved := importHTTP
	client := srv.Client()
	client.CheckRedirect = saved.CheckRedirect
	importHTTP = client
	defer func() { importHTTP = saved }()

	cfg := "plugins:\n" +
		"  echo:\n    url: oci://" + ref + "\n" +
		"  unsigned:\n    url: oci://" + unsignedRef + "\n" +
		"  web:\n    url: " + srv.URL + "/fetch.wasm\n    runtime_config:\n      allowed_hosts: [\"example.com\"]\n" +
		"  down:\n    url: " + srv.URL + "/downgrade.wasm\n"
	cfgPath := filepath.Join(e.root, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	importJSON := func(args ...string) map[string]importProposal {
		t.Helper()
		r := e.mustRun(0, append([]string{"tools", "import", cfgPath, "--json", "--plain-http"}, args...)...)
		var out struct{ Plugins []importProposal }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
		}
		byName := map[string]importProposal{}
		for _, p := range out.Plugins {
			byName[p.Name] = p
		}
		return byName
	}
	notes := func(p importProposal) string { return strings.Join(p.Notes, "\n") }

	got := importJSON()
	echo := got["echo"]
	if echo.SHA256 != sha256Hex(t, filepath.Join(e.testdata, "echo.wasm")) || sha256Hex(t, filepath.Join(e.plugins, "echo.wasm")) != echo.SHA256 ||
		!strings.HasPrefix(echo.Approve, "autoagent tools approve ") {
		t.Fatalf("echo (oci://, signed): %+v", echo)
	}
	if u := got["unsigned"]; u.SHA256 != "" || !strings.Contains(notes(u), "was not pulled") || !strings.Contains(notes(u), "no cosign signature") {
		t.Errorf("unsigned (oci://): %+v", u)
	}
	if w := got["web"]; w.SHA256 != "" || !strings.Contains(notes(w), "carries no signature: pass --allow-unsigned") {
		t.Errorf("web (https://) without --allow-unsigned: %+v", w)
	}
	for _, f := range []string{"unsigned.wasm", "web.wasm", "down.wasm"} {
		if _, err := os.Stat(filepath.Join(e.plugins, f)); err == nil {
			t.Errorf("%s written without --allow-unsigned", f)
		}
	}
	if e.loadManifest().Len() != 0 {
		t.Fatal("import approved something")
	}

	got = importJSON("--allow-unsigned")
	web := got["web"]
	if web.SHA256 != manifest.Sum(fetchWasm) || sha256Hex(t, filepath.Join(e.plugins, "web.wasm")) != web.SHA256 ||
		!strings.Contains(web.Approve, "--grant net:example.com") {
		t.Fatalf("web (https://) with --allow-unsigned: %+v", web)
	}
	if d := got["down"]; d.SHA256 != "" || !strings.Contains(notes(d), "not https") {
		t.Errorf("a redirect to http:// followed: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(e.plugins, "down.wasm")); err == nil {
		t.Error("down.wasm written after a redirect to http://")
	}
	logData, _ := os.ReadFile(filepath.Join(e.plugins, "manifest.log.jsonl"))
	if !strings.Contains(string(logData), srv.URL+"/fetch.wasm") || strings.Count(string(logData), `"unsigned":true`) < 2 {
		t.Fatalf("audit log lacks the unsigned pulls:\n%s", logData)
	}
	if e.loadManifest().Len() != 0 {
		t.Fatal("import approved something")
	}
	// The proposed command approves the downloaded module.
	e.mustRun(0, append(shellFields(t, web.Approve)[1:], "--yes")...)
	if _, ok := e.loadManifest().Lookup(web.SHA256); !ok {
		t.Fatal("the proposed approve command did not approve web.wasm")
	}
}
