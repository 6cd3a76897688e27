// Package eino shows toolmend in a CloudWeGo Eino ToolsNode: Mender.ArgumentsHandler is the
// node's ToolArgumentsHandler, so a broken call runs the tool with repaired arguments.
package eino

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	toolmend "example.invalid/toolmend/go"
)

type readInput struct {
	Path  string `json:"path" jsonschema:"required"`
	Limit int    `json:"limit,omitempty"`
}

// toolList is the Eino tools as a toolmend tool list (name and JSON Schema parameters).
func toolList(ctx context.Context, tools []tool.BaseTool) ([]toolmend.ToolDef, error) {
	var defs []toolmend.ToolDef
	for _, t := range tools {
		info, err := t.Info(ctx)
		if err != nil {
			return nil, err
		}
		params, err := info.ParamsOneOf.ToJSONSchema()
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		defs = append(defs, toolmend.ToolDef{Name: info.Name, Description: info.Desc, Parameters: raw})
	}
	return defs, nil
}

// setup returns the tools node (with toolmend's handler when repair is set) and the inputs
// the read tool ran with.
func setup(t *testing.T, repair bool) (*compose.ToolsNode, *[]readInput) {
	ctx := context.Background()
	var ran []readInput
	read, err := utils.InferTool("read", "Read a file.", func(_ context.Context, in readInput) (string, error) {
		ran = append(ran, in)
		return "contents of " + in.Path, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tools := []tool.BaseTool{read}
	config := &compose.ToolsNodeConfig{Tools: tools, ExecuteSequentially: true}
	if repair {
		defs, err := toolList(ctx, tools)
		if err != nil {
			t.Fatal(err)
		}
		mender, err := toolmend.New(defs, toolmend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mender.Close() })
		config.ToolArgumentsHandler = mender.ArgumentsHandler()
	}
	node, err := compose.NewToolNode(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	return node, &ran
}

func brokenCall() *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID:       "call_1",
		Type:     "function",
		Function: schema.FunctionCall{Name: "read", Arguments: `{"path": "/etc/hosts", "limit": "20",}`},
	}})
}

func TestToolsNodeRunsTheToolWithRepairedArguments(t *testing.T) {
	node, ran := setup(t, true)
	out, err := node.Invoke(context.Background(), brokenCall())
	if err != nil {
		t.Fatal(err)
	}
	if len(*ran) != 1 || (*ran)[0] != (readInput{Path: "/etc/hosts", Limit: 20}) {
		t.Fatalf("the tool ran with %+v", *ran)
	}
	if len(out) != 1 || out[0].Content != "contents of /etc/hosts" || out[0].ToolCallID != "call_1" {
		t.Fatalf("got %+v", out)
	}
}

// Without toolmend the same call never reaches the tool: the node fails.
func TestWithoutToolmendTheToolsNodeFails(t *testing.T) {
	node, ran := setup(t, false)
	if _, err := node.Invoke(context.Background(), brokenCall()); err == nil {
		t.Fatal("Eino ran the broken call without toolmend")
	}
	if len(*ran) != 0 {
		t.Fatalf("the tool ran with %+v", *ran)
	}
}

// A call toolmend cannot save fails the node with the retry message for the model.
func TestUnsavableCallFailsWithTheRetryMessage(t *testing.T) {
	node, ran := setup(t, true)
	msg := brokenCall()
	msg.ToolCalls[0].Function.Arguments = `{"limit": 3}`
	_, err := node.Invoke(context.Background(), msg)
	if err == nil || !strings.Contains(err.Error(), "path") || len(*ran) != 0 {
		t.Fatalf("err %v, ran %+v", err, *ran)
	}
	if _, ok := toolmend.IsInvalidCall(err); !ok {
		t.Fatalf("not an InvalidCallError: %v", err)
	}
}
