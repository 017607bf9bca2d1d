package mcp

import "context"

// TaskStatus asks the server for a task's status, for tests that check
// what the client did to a task.
func TaskStatus(ctx context.Context, c *Client, taskID string) (string, error) {
	var st taskState
	err := c.tasks.call(ctx, "tasks/get", map[string]string{"taskId": taskID}, &st)
	return st.Status, err
}
