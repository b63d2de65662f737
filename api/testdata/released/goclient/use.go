package heraldclient

// This file is copied beside the client that TestOpenAPIGoClient generates
// with oapi-codegen and compiled with it (never run): the README's steps, a
// push, consent and withdrawal, events and the push's counts, through the
// generated types, so a document change that makes them unusable (an
// interface{} where a type was, a member gone) fails the test.

import (
	"context"
	"fmt"
	"net/http"
)

func header(name, value string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set(name, value)
		return nil
	}
}

func userID(s string) UserId {
	var u UserId
	if err := u.FromUserId0(s); err != nil {
		panic(err)
	}
	return u
}

// readme makes the README's calls and answers the push's sent and opened
// counts.
func readme(ctx context.Context, token string) (int, int, error) {
	admin, err := NewClientWithResponses("http://127.0.0.1:8081", WithRequestEditorFn(header("Authorization", "Bearer "+token)))
	if err != nil {
		return 0, 0, err
	}
	tier, on := Business, true
	created, err := admin.CreateAppWithResponse(ctx, CreateAppJSONRequestBody{Name: "Shop", Tier: &tier, AppUserEnabled: &on})
	if err != nil {
		return 0, 0, err
	}
	if created.JSON400 != nil {
		return 0, 0, fmt.Errorf("%s: %s", created.JSON400.Code, created.JSON400.Message)
	}
	app := created.JSON201
	api, err := NewClientWithResponses("http://127.0.0.1:8080",
		WithRequestEditorFn(header("x-api-key", app.ApiKey)), WithRequestEditorFn(header("x-secret-key", app.SecretKey)))
	if err != nil {
		return 0, 0, err
	}
	user := userID("user-1")
	if _, err := api.RegisterPushTokenWithResponse(ctx, RegisterPushTokenJSONRequestBody{
		DeviceId: "device-1", Token: "fcm-token-1", Platform: Android, AppSourceVersion: "1.6.0", UserId: &user,
	}); err != nil {
		return 0, 0, err
	}
	pushed, err := api.PushToUsersWithResponse(ctx, &PushToUsersParams{}, PushToUsersJSONRequestBody{
		UserIds: []UserId{user}, Title: "Your order has shipped", Content: "It arrives tomorrow.",
	})
	if err != nil {
		return 0, 0, err
	}
	if e := pushed.JSON400; e != nil && e.Code == ServerBadRequestErrorCodeERRABVAL00 && e.StatusCode == 400 {
		return 0, 0, fmt.Errorf("refused: %v", e.Details)
	}
	pushID := pushed.HTTPResponse.Header.Get("X-Push-Id")
	marketing := true
	if _, err := api.SetUserMarketingWithResponse(ctx, SetUserMarketingJSONRequestBody{UserId: user, State: MarketingState{Marketing: &marketing}}); err != nil {
		return 0, 0, err
	}
	if _, err := api.WithdrawUserWithResponse(ctx, WithdrawUserJSONRequestBody{UserId: user}); err != nil {
		return 0, 0, err
	}
	if _, err := api.ReportEventsWithResponse(ctx, ReportEventsJSONRequestBody{
		DeviceId: "device-1", Events: []PushEvent{{PushId: pushID, Type: Opened}},
	}); err != nil {
		return 0, 0, err
	}
	push, err := admin.GetPushWithResponse(ctx, pushID)
	if err != nil || push.JSON200 == nil {
		return 0, 0, fmt.Errorf("push %s: %v", pushID, err)
	}
	return push.JSON200.Counts.Sent, push.JSON200.Counts.Opened, nil
}

var _ = readme
