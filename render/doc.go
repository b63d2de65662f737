// Package render chooses a push's title and content by language and
// renders them per recipient (DESIGN section 13, "Templates" and
// "Languages"). It is the one place those rules live: the accept path
// checks texts with Check and ParseLocalized, the send path compiles a
// push once into a Message and asks it, per delivery, which variant a
// device gets (Choose) and what that variant reads for one user (Render).
//
// Vocabulary:
//
//   - template: a title or content text, which may hold placeholders.
//   - placeholder: {{userId}}, {{tag.NAME}} or {{tag.NAME | "default"}}.
//   - static: a template with no placeholder; it renders to its own text
//     without allocating, so a push without placeholders costs nothing.
//   - entry: one language's title and content (Entry), keyed by a BCP 47
//     tag in a Localized.
//   - variant: what a Message can send; 0 is the push's default title and
//     content, 1…n its entries in the byte order of their keys as given.
//     The planner stores a variant per delivery; it is a small integer.
package render
