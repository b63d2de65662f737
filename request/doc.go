// Package request reads the JSON bodies of Herald's requests into domain
// values, naming every problem it finds (DESIGN section 4, item 8): the
// one place a body is judged, so that the Server API (package api), the
// admin API and its dashboard (package admin) refuse the same text for the
// same reason.
//
// A body is first checked as text (TextProblems: invalid UTF-8, lone
// surrogate escapes, members named twice), because encoding/json would
// read those without a word; then read member by member through an Object,
// which records each problem under its JSON path and, for the Server API,
// names every member no reader asked for. ReadPush reads the body of a
// push endpoint into the herald.PushRequest it makes and hands that to
// herald.NewPush, so the rules of what a push is stay in the domain.
package request
