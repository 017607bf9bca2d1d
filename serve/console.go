package serve

import (
	"embed"
	"net/http"
	"path"
)

// console holds the operator console: a page and its scripts and style,
// served at / and /console/. No build step made them; they load nothing
// from anywhere else.
//
//go:embed console/*.html console/*.js console/*.css
var console embed.FS

// consoleCSP lets the console load its own files and talk to its own
// origin only: no inline script or style, no other host, no framing.
const consoleCSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// consoleTypes are the media types of the console's files, by extension.
var consoleTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

func (s *Server) routeConsole() {
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { s.serveConsole(w, r, "index.html") })
	s.mux.HandleFunc("GET /console/{file}", func(w http.ResponseWriter, r *http.Request) {
		s.serveConsole(w, r, r.PathValue("file"))
	})
}

// serveConsole answers a console file. The files are public (a browser
// cannot send a Bearer token when it loads a page, and they hold no
// data): every call they make to the API carries the token. A server
// without tokens serves loopback peers only, the console as the API.
func (s *Server) serveConsole(w http.ResponseWriter, r *http.Request, name string) {
	if len(s.tokens) == 0 && !loopbackPeer(r.RemoteAddr) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "unauthorized",
			"message": "this server has no tokens and serves loopback clients only: start it with --token-env (Options.Tokens)"}})
		return
	}
	typ, ok := consoleTypes[path.Ext(name)]
	var b []byte
	if ok && name == path.Base(name) {
		b, _ = console.ReadFile("console/" + name)
	}
	if b == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": "no console file " + name}})
		return
	}
	h := w.Header()
	h.Set("Content-Type", typ)
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	w.Write(b)
}
