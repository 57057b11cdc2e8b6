package apiproxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
)

// hidden says whether path is under one of the group versions hide (Options.Hide).
func hidden(hide []string, path string) bool {
	for _, gv := range hide {
		prefix := "/apis/" + gv
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}

// hidingIn says whether path is the discovery document of a group one of whose versions are in
// hide.
func hidingIn(hide []string, path string) bool {
	group, ok := strings.CutPrefix(path, "/apis/")
	if !ok || group == "" || strings.Contains(group, "/") {
		return false
	}
	return slices.ContainsFunc(hide, func(gv string) bool { return strings.HasPrefix(gv, group+"/") })
}

// serveGroupWithoutHidden answers a group's discovery document as the API server does, less
// the versions in hide (404 when none is left).
func (p *Proxy) serveGroupWithoutHidden(w http.ResponseWriter, r *http.Request, hide []string) {
	rec := httptest.NewRecorder()
	p.forward.ServeHTTP(rec, r)
	var doc map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	versions, _ := doc["versions"].([]any)
	var kept []any
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if gv, _ := m["groupVersion"].(string); !slices.Contains(hide, gv) {
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource", "")
		return
	}
	doc["versions"] = kept
	if pv, _ := doc["preferredVersion"].(map[string]any); pv != nil {
		if gv, _ := pv["groupVersion"].(string); slices.Contains(hide, gv) {
			doc["preferredVersion"] = kept[0]
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
