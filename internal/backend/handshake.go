package backend

import plugin "github.com/hashicorp/go-plugin"

// ProtocolVersion is the newest protocol version this build speaks. A
// future incompatible protocol adds version 2 beside 1 in the version maps
// of both sides; go-plugin then negotiates the highest version both know,
// so old binaries keep working with new hosts and the other way round.
const ProtocolVersion = 1

// Handshake is the go-plugin handshake every autoagent backend uses. The
// magic cookie is not a secret: it only stops a backend binary that someone
// runs by hand from waiting silently for a host (it prints a message and
// exits instead), and stops the host from talking to a binary that is not
// an autoagent backend.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "AUTOAGENT_BACKEND_COOKIE",
	MagicCookieValue: "b1f4e0d2-autoagent-backend-3c7a9e51",
}

// PluginName returns the name under which a backend of kind k is
// dispensed within a protocol version's plugin set.
func PluginName(k Kind) string { return string(k) }
