// Package netcap is the net: capability: Extism's http_request,
// http_status_code and http_headers, written against [Call], and the
// [Policy] every request of a module passes.
//
// Every hop (the first request and each redirect) is checked against the
// module's net: grants by URL ([Policy.CheckURL]), and every address a
// name resolves to is checked again when it is dialled, so a DNS answer
// cannot differ between the check and the connection; loopback, private,
// link-local, metadata and other special addresses ([SpecialAddr]) are
// reached only through an explicit IP grant. No proxy from the environment
// is used. host/ABI.md §1.2 is the guest's view of it.
//
//	p := netcap.NewPolicy(grants, nil)
//	defer p.Close()
//	if _, refused := p.CheckURL(u); refused != nil {
//		return refused // net: request to http://10.0.0.1/ refused: 10.0.0.1 is a private address; …
//	}
package netcap
