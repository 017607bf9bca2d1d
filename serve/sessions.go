package serve

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/autoagent-go/autoagent/session"
)

func (s *Server) sessions() (session.Store, *apiError) {
	if s.opts.Sessions == nil {
		return nil, &apiError{http.StatusNotFound, "no_sessions", "this server has no session store (--sessions FILE, Options.Sessions)"}
	}
	return s.opts.Sessions, nil
}

func sessionKey(r *http.Request) (session.Key, *apiError) {
	k := session.Key{User: r.PathValue("user"), Session: r.PathValue("session")}
	if k.User == "-" {
		k.User = "" // the sessions of no user
	}
	if err := k.Validate(); err != nil {
		return k, badRequest("%v", err)
	}
	return k, nil
}

// listSessions answers {"sessions": [...]}: a user's (?user=U), or all
// (?all=true).
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	st, e := s.sessions()
	if e != nil {
		return e
	}
	q := r.URL.Query()
	all := q.Get("all") == "true"
	infos, err := st.List(r.Context(), q.Get("user"), all)
	if err != nil {
		return internalError(err)
	}
	if infos == nil {
		infos = []session.Info{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": infos})
	return nil
}

// showSession answers the session's info and entries.
func (s *Server) showSession(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	st, e := s.sessions()
	if e != nil {
		return e
	}
	k, e := sessionKey(r)
	if e != nil {
		return e
	}
	info, err := st.Info(r.Context(), k)
	if errors.Is(err, session.ErrNotFound) {
		return &apiError{http.StatusNotFound, "unknown_session", fmt.Sprintf("no session %s: GET /v1/sessions?all=true lists them", k)}
	}
	if err != nil {
		return internalError(err)
	}
	entries, err := st.Load(r.Context(), k)
	if err != nil {
		return internalError(err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"session": info, "entries": entries})
	return nil
}

// continueSession starts a run that continues the session: POST /v1/runs
// with the session's key.
func (s *Server) continueSession(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	if _, e := s.sessions(); e != nil {
		return e
	}
	k, e := sessionKey(r)
	if e != nil {
		return e
	}
	var req startRequest
	if e := s.decode(w, r, &req); e != nil {
		return e
	}
	if req.Session != nil && *req.Session != k {
		return badRequest("the body names session %s, the path %s", req.Session, k)
	}
	req.Session = &k
	return s.start(w, r, p, req)
}
