// Package herald is Herald's domain: what the push service is about, with
// no HTTP, SQL or FCM in it (it imports the standard library only, and
// every other package of Herald imports it).
//
// It holds three things:
//
//   - Entities: App, User, Device, Push and its Recipients and Content,
//     Delivery, Event, the consent pair and its ConsentRecord trail, and
//     Error with the spec's codes (ERR-AB-…), which web.Error turns into
//     HTTP answers.
//   - Rules, as values or pure functions with table tests: NewPush and
//     PushGate, the KindRule table, App.Charge and Refund, the night window
//     (JudgeNight, NextMorning), the ad footer and the (광고) prefix, field
//     limits (TopicProblem, ParseScheduleTime, …), UnreachableUsers and the
//     webhook retry policy (WebhookRetry).
//   - The interfaces of what Herald runs on: the stores (AppStore,
//     UserStore, PushStore, …) both SQL engines implement and storetest
//     checks, and AppSender, the push service a delivery is sent through.
//
// What is not domain lives beside it: package request reads request
// bodies into these values (the JSON text check and the push endpoints'
// reading), sendstore is the protocol between delivery and its store, and
// webhook writes the webhook messages' wire format.
//
// Neither are the admin listener's identity and audit: package identity
// keeps the sign-in vocabulary (operators' secrets, setup links, API
// tokens, sessions, attempt counts) and its stores, package access the
// hash-chained access records and their store, and package retention its
// store's runs and steps. What stays here of them is what the domain
// shares with both: the Operator and its Role (an access record's actor),
// the errors with the spec's codes, and MasterKey, which derives the
// access records' key.
package herald
