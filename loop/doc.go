// Package loop is the agent loop.
package loop
