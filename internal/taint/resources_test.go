package taint_test

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/taint"
)

// exerciseResources lists the resources and templates, reads each,
// completes an argument of a prompt and of a template, and on
// 2025-11-25 subscribes to one for a moment (the upstream then says it
// changed).
func exerciseResources(ctx context.Context, cs *mcp.ClientSession) []error {
	var errs []error
	if _, err := cs.ListResources(ctx, nil); err != nil {
		errs = append(errs, err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		errs = append(errs, err)
	}
	for _, uri := range append(taint.Resources, taint.ResourceTemplated) {
		_, _ = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}) // an error is a finding's business
	}
	for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: "taint.p_all"}, {Type: "ref/resource", URI: "bulwark://taint/file:///t/{x}"}} {
		arg := map[string]string{"ref/prompt": "a", "ref/resource": "x"}[ref.Type]
		if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: "v"}}); err != nil {
			errs = append(errs, err)
		}
	}
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		// a subscription is a subscriptions/listen stream that lasts until
		// it is cancelled, which the HTTP recorder reads to its end
		return errs
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: taint.Resources[0]}); err != nil {
		errs = append(errs, err)
	}
	time.Sleep(200 * time.Millisecond) // the update's way back
	_ = cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: taint.Resources[0]})
	return errs
}
