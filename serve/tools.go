package serve

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/manifest"
)

func (s *Server) pluginsDir() (*plugindir.Dir, *apiError) {
	if s.opts.Plugins == nil {
		return nil, &apiError{http.StatusNotFound, "no_plugins", "this server has no plugins directory (--plugins DIR, Options.Plugins)"}
	}
	return s.opts.Plugins, nil
}

func (s *Server) store(d *plugindir.Dir) *manifest.Store {
	o := d.Options()
	path := o.Manifest
	if path == "" {
		path = filepath.Join(o.Dir, "manifest.json")
	}
	return &manifest.Store{Path: path, Trust: o.Trust}
}

// toolRow is one module of the plugins directory.
type toolRow struct {
	Name       string           `json:"name"`
	File       string           `json:"file"`
	SHA256     string           `json:"sha256"`
	Status     string           `json:"status"`
	Grants     []string         `json:"grants"`
	Limits     *manifest.Limits `json:"limits,omitempty"`
	Tools      []string         `json:"tools"`
	ApprovedBy string           `json:"approved_by,omitempty"`
	ApprovedAt *time.Time       `json:"approved_at,omitempty"`
	Note       string           `json:"note,omitempty"`
	Reason     string           `json:"reason,omitempty"`
}

// listTools answers the plugins directory as it is loaded now: approved,
// pending and invalid modules (the shape of `tools list --json`).
func (s *Server) listTools(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	d, e := s.pluginsDir()
	if e != nil {
		return e
	}
	snap := d.Snapshot()
	rows := []toolRow{}
	for _, p := range snap.Plugins {
		row := toolRow{Name: p.Name, File: p.File, SHA256: p.SHA256, Status: string(p.Status), Grants: []string{}, Tools: p.Tools}
		if e := p.Entry; e != nil {
			row.Grants = manifest.GrantStrings(e.Grants)
			at := e.ApprovedAt
			row.ApprovedBy, row.ApprovedAt, row.Note = e.ApprovedBy, &at, e.Note
			if !e.Limits.IsZero() {
				l := e.Limits
				row.Limits = &l
			}
		}
		if p.Status != plugindir.StatusApproved && p.Err != nil {
			row.Reason = p.Err.Error()
		}
		if row.Tools == nil {
			row.Tools = []string{}
		}
		rows = append(rows, row)
	}
	out := map[string]any{"dir": snap.Dir, "manifest": snap.Manifest, "manifest_trusted": snap.Untrusted == nil, "plugins": rows, "conflicts": snap.Conflicts}
	if snap.Conflicts == nil {
		out["conflicts"] = []plugindir.Conflict{}
	}
	if snap.Untrusted != nil {
		out["untrusted"] = snap.Untrusted.Error()
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// moduleFile resolves the {file} of a path: a .wasm file directly in the
// plugins directory, never a path elsewhere.
func (s *Server) moduleFile(d *plugindir.Dir, name string) (string, *apiError) {
	if name == "" || name != filepath.Base(name) || strings.ContainsAny(name, `/\`) || name == "." || name == ".." || !strings.HasSuffix(name, ".wasm") || strings.HasPrefix(name, ".") {
		return "", badRequest("%q: name a .wasm file of the plugins directory (GET /v1/tools lists them)", name)
	}
	if !manifest.ValidName(manifest.NameFromFile(name)) {
		return "", badRequest("%q is not a valid module name (1-128 letters, digits, '_', '.' or '-')", name)
	}
	path := filepath.Join(d.Options().Dir, name)
	if _, err := os.Lstat(path); err != nil {
		return "", &apiError{http.StatusNotFound, "unknown_module", fmt.Sprintf("no module %s in the plugins directory", name)}
	}
	return path, nil
}

// inspectTool reviews a module: its hash, ABI, requested capabilities,
// tools and schemas, and its approval if any.
func (s *Server) inspectTool(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	d, e := s.pluginsDir()
	if e != nil {
		return e
	}
	path, e := s.moduleFile(d, r.PathValue("file"))
	if e != nil {
		return e
	}
	rv, err := plugindir.ReviewModule(r.Context(), path)
	if rv == nil {
		return internalError(err)
	}
	out := map[string]any{"file": filepath.Base(path), "sha256": rv.SHA256, "status": string(plugindir.StatusPending)}
	if rv.SidecarFile != "" {
		out["sidecar"], out["sidecar_sha256"] = rv.SidecarFile, rv.SidecarSHA256
	}
	if err != nil {
		out["status"], out["reason"] = string(plugindir.StatusInvalid), err.Error()
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	out["abi"] = rv.Inspection.ABI
	out["requested"] = manifest.GrantStrings(rv.Requested)
	out["describe"] = rv.Inspection.Description
	if m, err := s.store(d).Load(); err == nil {
		if en, ok := rv.Approval(m); ok {
			out["status"] = string(plugindir.StatusApproved)
			out["approval"] = map[string]any{"grants": manifest.GrantStrings(en.Grants), "limits": en.Limits, "approved_by": en.ApprovedBy, "approved_at": en.ApprovedAt, "note": en.Note}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// approveRequest is the body of POST /v1/tools/{file}/approve.
type approveRequest struct {
	// SHA256, when given, must be the file's: the operator approves the
	// bytes they inspected, not bytes swapped in since.
	SHA256    string          `json:"sha256"`
	Grants    []string        `json:"grants"`
	Limits    manifest.Limits `json:"limits"`
	Note      string          `json:"note"`
	Force     bool            `json:"force"`
	SkipTools []string        `json:"skip_tools"`
}

// approveTool approves a module's bytes with grants and limits, recorded
// in the manifest and its audit log with the operator as `by`.
func (s *Server) approveTool(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	d, e := s.pluginsDir()
	if e != nil {
		return e
	}
	path, e := s.moduleFile(d, r.PathValue("file"))
	if e != nil {
		return e
	}
	var req approveRequest
	if e := s.decode(w, r, &req); e != nil {
		return e
	}
	grants, err := manifest.ParseGrants(req.Grants)
	if err != nil {
		return badRequest("grants: %v", err)
	}
	for _, g := range grants {
		if (g.Kind == manifest.KindFSRead || g.Kind == manifest.KindFSWrite) && !filepath.IsAbs(g.Value) {
			return badRequest("grant %s: give an absolute path (the server's working directory is not the operator's)", g)
		}
	}
	if err := req.Limits.Validate(); err != nil {
		return badRequest("limits: %v", err)
	}
	for _, pat := range req.SkipTools {
		if err := manifest.ValidSkipPattern(pat); err != nil {
			return badRequest("skip_tools %q: %v", pat, err)
		}
	}
	if len(req.Note) > 4096 {
		return badRequest("a note of %d bytes, more than 4096", len(req.Note))
	}
	rv, err := plugindir.ReviewModule(r.Context(), path)
	if err != nil {
		return &apiError{http.StatusUnprocessableEntity, "invalid_module", fmt.Sprintf("cannot approve %s: %v", filepath.Base(path), err)}
	}
	if req.SHA256 != "" && !strings.EqualFold(req.SHA256, rv.SHA256) {
		return &apiError{http.StatusConflict, "changed", fmt.Sprintf("%s has sha256 %s now, not %s: inspect it again", filepath.Base(path), rv.SHA256, req.SHA256)}
	}
	if err := rv.CheckGrants(grants, req.Force, d.Options()); err != nil {
		return &apiError{http.StatusUnprocessableEntity, "grants_refused", err.Error()}
	}
	en, err := s.store(d).Approve(r.Context(), manifest.Approval{
		SHA256: rv.SHA256, SidecarSHA256: rv.SidecarSHA256, File: path, Name: manifest.NameFromFile(path),
		Grants: grants, Requested: rv.Requested, Force: req.Force, Limits: req.Limits, By: p.name, Note: req.Note,
		SkipTools: req.SkipTools, Tools: rv.ToolNames(),
	})
	if err != nil {
		return internalError(err)
	}
	if _, err := d.Reload(r.Context()); err != nil {
		s.note("plugins: reload after approving %s: %v", en.File, err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"approved": map[string]any{
		"name": en.Name, "file": en.File, "sha256": en.SHA256, "grants": manifest.GrantStrings(en.Grants), "limits": en.Limits,
		"approved_by": en.ApprovedBy, "approved_at": en.ApprovedAt, "note": en.Note,
	}})
	return nil
}

// revokeRequest is the body of POST /v1/tools/{target}/revoke.
type revokeRequest struct {
	Note string `json:"note"`
}

// revokeTool removes approvals: {target} is a module name, a sha256 or a
// prefix of one (as manifest.Store.Revoke takes).
func (s *Server) revokeTool(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	d, e := s.pluginsDir()
	if e != nil {
		return e
	}
	var req revokeRequest
	if e := s.decode(w, r, &req); e != nil {
		return e
	}
	removed, err := s.store(d).Revoke(r.Context(), manifest.Revocation{Target: r.PathValue("target"), By: p.name, Note: req.Note})
	if errors.Is(err, manifest.ErrNotFound) {
		return &apiError{http.StatusNotFound, "not_approved", err.Error()}
	}
	if err != nil {
		return badRequest("%v", err)
	}
	if _, err := d.Reload(r.Context()); err != nil {
		s.note("plugins: reload after revoking: %v", err)
	}
	out := []map[string]any{}
	for _, en := range removed {
		out = append(out, map[string]any{"name": en.Name, "file": en.File, "sha256": en.SHA256})
	}
	writeJSON(w, http.StatusOK, map[string]any{"revoked": out})
	return nil
}

// verifyTools checks every approved file against its approvals, running
// nothing: {"ok", "files": [...], "unapproved": [...]}.
func (s *Server) verifyTools(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	d, e := s.pluginsDir()
	if e != nil {
		return e
	}
	m, err := s.store(d).Load()
	if err != nil {
		return internalError(err)
	}
	rep, err := manifest.Verify(m, d.Options().Dir)
	if err != nil {
		return internalError(err)
	}
	files := []map[string]any{}
	for _, c := range rep.Files {
		row := map[string]any{"file": c.File, "status": c.Status.String(), "sha256": c.SHA256}
		if c.Detail != "" {
			row["detail"] = c.Detail
		}
		if c.Err != nil {
			row["error"] = c.Err.Error()
		}
		files = append(files, row)
	}
	unapproved := rep.Unapproved
	if unapproved == nil {
		unapproved = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": rep.OK(), "files": files, "unapproved": unapproved})
	return nil
}
