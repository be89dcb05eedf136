"""One-sentence descriptions of the builtins, for ``docs/builtins.md``.

Each sentence says what the builtin returns and what is worth knowing about
it: when it fails (a builtin error makes the expression undefined unless
strict builtin errors are on), and the OPA behaviours that pyrego reproduces
even where they surprise. The catalogue test checks that every registered
builtin has an entry here.
"""

from __future__ import annotations

DESCRIPTIONS: dict[str, str] = {
    # ------------------------------------------------------------ language constructs
    "assign": (
        "The `:=` operator: declares a local variable and binds it to a value; pyrego's code generator "
        "compiles it directly, it is never called as a function."
    ),
    "eq": (
        "The `=` operator: unifies two terms, binding variables on either side so that both become equal; "
        "compiled directly by the code generator."
    ),
    "print": (
        "Writes its arguments, separated by spaces, to the engine's print output and is always true; "
        "an undefined argument prints as `<undefined>` instead of making the call undefined."
    ),
    "internal.print": (
        "The compiled form of `print(...)`: each argument arrives as the set of its values, and an empty "
        "set prints `<undefined>`."
    ),
    "internal.member_2": (
        "The `x in xs` operator: whether `x` is an element of an array or set, or a value of an object; "
        "false (not an error) for any other collection argument."
    ),
    "internal.member_3": (
        "The `k, v in xs` operator: whether the array index or object key `k` holds `v` (for a set, "
        "whether `k` is a member equal to `v`); false for anything that is not a collection."
    ),
    "internal.template_string": (
        "The compiled form of a template string `$\"...{expr}...\"`: joins the literal parts with each "
        "expression's value (strings as they are, other values as Rego text, `<undefined>` when undefined); "
        "an expression with several values is a conflict error."
    ),
    "internal.test_case": (
        "Marks the point where one case of a parameterised test rule starts, for `pyrego test`; "
        "always true and without effect on evaluation."
    ),
    # ------------------------------------------------------------ comparison
    "equal": (
        "The `==` operator: whether two values are equal (`1 == 1.0` is true; values of different types "
        "never are)."
    ),
    "neq": "The `!=` operator: whether two values are not equal.",
    "lt": (
        "The `<` operator, using Rego's total order over all values "
        "(null < booleans < numbers < strings < arrays < objects < sets), so values of any types compare."
    ),
    "lte": "The `<=` operator, using the same total order over all values as `<`.",
    "gt": "The `>` operator, using the same total order over all values as `<`.",
    "gte": "The `>=` operator, using the same total order over all values as `<`.",
    # ------------------------------------------------------------ arithmetic
    "plus": (
        "The `+` operator on two numbers; integers stay exact at any size and other numbers follow "
        "OPA's decimal results (`0.1 + 0.2 == 0.3`)."
    ),
    "minus": (
        "The `-` operator: the difference of two numbers, or the set difference of two sets; "
        "mixing a number and a set is a type error."
    ),
    "mul": (
        "The `*` operator on two numbers; integer products are exact, and pyrego refuses ones longer than "
        "2^22 bits."
    ),
    "div": (
        "The `/` operator; the quotient is exact when it divides evenly and otherwise a decimal "
        "(`1 / 3` is `0.33333333333333333334`), and dividing by zero is an error."
    ),
    "rem": (
        "The `%` operator: the remainder of two integers, with the sign of the dividend (`-5 % 3 == -2`); "
        "a non-integer operand or a zero divisor is an error."
    ),
    "abs": "The absolute value of a number.",
    "round": "The number rounded to the nearest integer, halves away from zero (`round(-2.5) == -3`).",
    "ceil": (
        "The smallest integer not less than the number; as in OPA v1.20, a number strictly between "
        "-1 and 0 gives 1."
    ),
    "floor": (
        "The largest integer not greater than the number; as in OPA v1.20, a number strictly between "
        "-1 and 0 gives 0."
    ),
    # ------------------------------------------------------------ numbers and bits
    "numbers.range": (
        "The integers from `a` to `b` inclusive, counting down when `a > b`; non-integer bounds are an error."
    ),
    "numbers.range_step": (
        "Every `step`-th integer from `a` towards `b`, including `b` only when a step lands on it; "
        "the step must be a positive integer."
    ),
    "bits.and": "The bitwise AND of two integers of any size (negative numbers as two's complement).",
    "bits.or": "The bitwise OR of two integers of any size (negative numbers as two's complement).",
    "bits.xor": "The bitwise exclusive OR of two integers of any size (negative numbers as two's complement).",
    "bits.negate": "The bitwise complement of an integer, `-x - 1`.",
    "bits.lsh": (
        "The integer shifted left by `n` bits; a negative shift is a type error, and pyrego refuses "
        "results longer than 2^22 bits."
    ),
    "bits.rsh": (
        "The integer shifted right by `n` bits, rounding towards minus infinity for negative numbers; "
        "a negative shift is a type error."
    ),
    "rand.intn": (
        "A random integer in `[0, |n|)` (0 when `n` is 0), the same for the same string and `n` "
        "throughout one evaluation."
    ),
    # ------------------------------------------------------------ aggregates
    "count": (
        "The number of elements of an array, set or object, or of Unicode code points (not bytes) in a string."
    ),
    "sum": "The sum of an array or set of numbers (0 when empty); a non-number element is a type error.",
    "product": "The product of an array or set of numbers (1 when empty); a non-number element is a type error.",
    "max": "The greatest element of an array or set in Rego's total order over values; undefined when empty.",
    "min": "The least element of an array or set in Rego's total order over values; undefined when empty.",
    "sort": "The elements of an array or set as an array in ascending order (Rego's total order over values).",
    "all": (
        "Deprecated (use `every`): whether every element of an array or set is `true`; true when empty."
    ),
    "any": (
        "Deprecated (use `true in xs`): whether some element of an array or set is `true`; false when empty."
    ),
    # ------------------------------------------------------------ arrays
    "array.concat": "A new array holding the elements of the first array followed by those of the second.",
    "array.slice": (
        "The elements from index `start` up to but not including `stop`; out-of-range indices are clamped "
        "to the array, so it never fails on bounds (a start past the stop gives `[]`)."
    ),
    "array.reverse": "The array's elements in reverse order.",
    "array.flatten": (
        "The array with every element that is itself an array spliced into its place, one level deep "
        "(`[1, [2, [3]]]` gives `[1, 2, [3]]`)."
    ),
    # ------------------------------------------------------------ sets
    "and": "The `&` operator: the intersection of two sets.",
    "or": "The `|` operator: the union of two sets.",
    "intersection": (
        "The intersection of a set of sets (empty for an empty set); a member that is not a set is a type "
        "error."
    ),
    "union": "The union of a set of sets (empty for an empty set); a member that is not a set is a type error.",
    "set_diff": "Deprecated (use `a - b`): the members of the first set that are not in the second.",
    # ------------------------------------------------------------ objects
    "object.get": (
        "The value at `key` in the object, or at a path when `key` is an array (descending through objects, "
        "arrays and sets; `[]` gives the object itself), else the default."
    ),
    "object.keys": "The set of the object's keys.",
    "object.remove": (
        "The object without the keys listed in an array, a set, or the keys of an object; missing keys "
        "are ignored."
    ),
    "object.filter": (
        "The object keeping only the keys listed in an array, a set, or the keys of an object; missing keys "
        "are ignored."
    ),
    "object.union": (
        "The two objects merged recursively: where both hold an object under a key those are merged in turn, "
        "otherwise the second object's value wins."
    ),
    "object.union_n": (
        "An array of objects merged recursively from left to right, later values winning as in "
        "`object.union`; `[]` gives `{}`."
    ),
    "object.subset": (
        "Whether the second argument is contained in the first: recursively for objects, as a subset for "
        "sets, as a contiguous run for arrays, and for an array and a set as OPA v1.20.2 counts it: each array "
        "element found in the set counts, duplicates again, and the answer is true once the count reaches the "
        "set's size (`[1, 2, 1]` holds `{1, 2, 3}`; `[]` does not hold `set()`); other type pairs are an error."
    ),
    # ------------------------------------------------------------ types and conversions
    "is_array": "Whether the value is an array (false, never undefined, for anything else).",
    "is_boolean": "Whether the value is a boolean (false, never undefined, for anything else).",
    "is_null": "Whether the value is `null` (false, never undefined, for anything else).",
    "is_number": "Whether the value is a number (false, never undefined, for anything else).",
    "is_object": "Whether the value is an object (false, never undefined, for anything else).",
    "is_set": "Whether the value is a set (false, never undefined, for anything else).",
    "is_string": "Whether the value is a string (false, never undefined, for anything else).",
    "type_name": (
        "The name of the value's type: `null`, `boolean`, `number`, `string`, `array`, `object` or `set`."
    ),
    "to_number": (
        "The number a value stands for: numbers as they are, `null` as 0, booleans as 1 or 0, and strings "
        "in Go's `strconv.ParseFloat` syntax (signs, exponents, `_` between digits); other strings, `inf` "
        "and `nan` are errors."
    ),
    "format_int": (
        "The number as text in base 2, 8, 10 or 16 (lowercase digits, a leading `-` when negative); a "
        "non-integer is truncated towards zero first, and any other base is an error."
    ),
    "cast_array": (
        "Deprecated: an array as it is, or a set's members as an array in sorted order; anything else is a "
        "type error."
    ),
    "cast_set": "Deprecated: a set as it is, or an array's elements as a set; anything else is a type error.",
    "cast_string": "Deprecated: the value if it is a string, else a type error (no conversion happens).",
    "cast_boolean": "Deprecated: the value if it is a boolean, else a type error (no conversion happens).",
    "cast_null": "Deprecated: `null` if the value is `null`, else a type error.",
    "cast_object": "Deprecated: the value if it is an object, else a type error.",
    # ------------------------------------------------------------ strings
    "concat": "The strings of an array or set joined by the delimiter; a set's members are joined in sorted order.",
    "contains": "Whether the string contains the substring (every string contains `\"\"`).",
    "startswith": "Whether the string begins with the prefix.",
    "endswith": "Whether the string ends with the suffix.",
    "indexof": (
        "The code-point index of the first occurrence of the substring, or -1 when there is none; "
        "an empty substring is an error."
    ),
    "indexof_n": (
        "The code-point indices of every occurrence of the substring, overlapping ones included; "
        "an empty substring is an error."
    ),
    "strings.count": (
        "The number of non-overlapping occurrences of the substring; an empty substring counts "
        "one more than the number of code points, as in Go."
    ),
    "strings.any_prefix_match": (
        "Whether any of the strings (a string, array or set) starts with any of the prefixes "
        "(likewise); false when either side is empty."
    ),
    "strings.any_suffix_match": (
        "Whether any of the strings (a string, array or set) ends with any of the suffixes "
        "(likewise); false when either side is empty."
    ),
    "substring": (
        "The `length` code points starting at `offset` (to the end when `length` is negative, `\"\"` past "
        "the end); a negative offset is an error."
    ),
    "strings.reverse": "The string with its code points in reverse order.",
    "lower": "The string in lower case, mapping each character on its own as Go does.",
    "upper": "The string in upper case, mapping each character on its own as Go does (`ß` stays `ß`).",
    "split": (
        "The parts of the string between occurrences of the delimiter (`split(\"\", \",\")` is `[\"\"]`); "
        "an empty delimiter splits into single characters."
    ),
    "strings.split_n": (
        "The first `n` parts of `split(s, delim)`, or the last `-n` parts when `n` is negative."
    ),
    "replace": "The string with every non-overlapping occurrence of `old` replaced by `new`.",
    "strings.replace_n": (
        "The string with every key of the pattern object replaced by its value in one left-to-right pass "
        "(replaced text is not searched again; at one position the first key in sorted order wins)."
    ),
    "trim": "The string without any leading or trailing characters that appear in the cutset.",
    "trim_left": "The string without any leading characters that appear in the cutset.",
    "trim_right": "The string without any trailing characters that appear in the cutset.",
    "trim_prefix": "The string without the prefix if it starts with it, else the string unchanged.",
    "trim_suffix": "The string without the suffix if it ends with it, else the string unchanged.",
    "trim_space": "The string without leading and trailing white space (the characters Go's `unicode.IsSpace` names).",
    "sprintf": (
        "The values formatted with Go's `fmt` verbs (`%s`, `%d`, `%v`, `%.2f`, ...); arguments other than "
        "strings and numbers are formatted as their Rego text, and Go's notes such as `%!d(MISSING)` appear "
        "in the result rather than as errors."
    ),
    "strings.render_template": (
        "The Go `text/template` rendered with the object's values (`{{.name}}`, `if`, `range`, ...); a "
        "missing key renders as `<undefined>`. As in OPA the values are read back from their Rego text as "
        "JSON, so a set or a non-string key anywhere in them is an error."
    ),
    # ------------------------------------------------------------ regular expressions and globs
    "regex.match": (
        "Whether the RE2 pattern matches anywhere in the string (anchor it with `^...$` for a whole match); "
        "an invalid pattern is an error."
    ),
    "re_match": "Deprecated (use `regex.match`): whether the RE2 pattern matches anywhere in the string.",
    "regex.is_valid": "Whether the string is a valid RE2 pattern (false for a non-string).",
    "regex.split": "The parts of the string between the pattern's matches.",
    "regex.find_n": "The first `n` matches of the pattern in the string, or all of them when `n` is negative.",
    "regex.find_all_string_submatch_n": (
        "For the first `n` matches (all when `n` is negative), the match followed by the text of each capture "
        "group (`\"\"` for a group that took no part)."
    ),
    "regex.replace": (
        "The string with every match of the pattern replaced; the replacement may refer to groups as "
        "`$1`, `${1}` or `${name}`."
    ),
    "regex.template_match": (
        "Whether the whole string matches the template, in which text between the one-character start and "
        "end delimiters is a regular expression and the rest is literal."
    ),
    "regex.globs_match": (
        "Whether two patterns in a restricted regular-expression syntax (only `.`, `*`, `+`, `[...]` classes "
        "and `\\` escapes are special) can both match some non-empty string."
    ),
    "glob.match": (
        "Whether the whole string matches the glob (`*`, `**`, `?`, `[a-z]`, `{a,b}`); `*` and `?` do not "
        "cross the delimiters, which default to `.` when the list is empty and are none at all when it is null."
    ),
    "glob.quote_meta": (
        "The string with the glob metacharacters `*?\\[]{}` escaped by a backslash so that it matches "
        "literally."
    ),
    # ------------------------------------------------------------ graphs and documents
    "graph.reachable": (
        "The nodes reachable from the initial nodes, themselves included, in a graph given as an object "
        "from node to an array or set of neighbours; nodes that are not keys of the graph are left out."
    ),
    "graph.reachable_paths": (
        "Every path from the initial nodes as an array of nodes, each ending at a node without neighbours, "
        "before a node that is not in the graph, or where it would close a cycle."
    ),
    "walk": (
        "A relation over every `[path, value]` pair in a document, the document itself first with path `[]` "
        "then depth first (object keys and set members in sorted order); `walk(x, [p, v])` enumerates them."
    ),
    # ------------------------------------------------------------ policy and runtime
    "rego.parse_module": (
        "Parses Rego text (the first argument names the file in errors) into OPA's JSON form of the module, "
        "comments included; `# METADATA` blocks are not read (plain comments, as in OPA). A parse error is a "
        "builtin error."
    ),
    "rego.metadata.rule": (
        "The calling rule's annotations (its `# METADATA` block, `scope` included), or `{}` when it has none."
    ),
    "rego.metadata.chain": (
        "`{\"path\": ..., \"annotations\": ...}` entries for the calling rule (always present) and then each "
        "enclosing package that has annotations, innermost first."
    ),
    "opa.runtime": (
        "The runtime object the embedding program configured (`Engine.set_runtime`; `pyrego eval` reports "
        "the environment and version), else `{}`."
    ),
    "trace": "Adds a note to the evaluation trace (`explain` output) and is always true.",
    # ------------------------------------------------------------ base64 and hex
    "base64.encode": "The standard base64 encoding of the string's UTF-8 bytes, with `=` padding.",
    "base64.decode": "The string that standard base64 text encodes; text that is not valid padded base64 is an error.",
    "base64.is_valid": "Whether the string is valid standard base64 with its `=` padding.",
    "base64url.encode": "The URL-safe base64 encoding (`-` and `_`) of the string, with `=` padding.",
    "base64url.encode_no_pad": "The URL-safe base64 encoding of the string without `=` padding.",
    "base64url.decode": "The string that URL-safe base64 text encodes, padded or not; invalid text is an error.",
    "hex.encode": "The lowercase hexadecimal encoding of the string's bytes.",
    "hex.decode": "The string that hexadecimal text encodes; a non-hex character or an odd length is an error.",
    # ------------------------------------------------------------ JSON and YAML
    "json.marshal": (
        "The value as compact JSON text, as Go writes it: object keys sorted, sets as arrays, and `<`, `>`, `&` "
        "escaped as `\\u003c`, `\\u003e`, `\\u0026`."
    ),
    "json.marshal_with_options": (
        "The value as JSON text, indented when `pretty` is true or an `indent` (default a tab) or `prefix` is "
        "given, compact when `pretty` is false; an unknown option key is a type error."
    ),
    "json.unmarshal": "The value that JSON text stands for; invalid JSON is an error.",
    "json.is_valid": "Whether the string is valid JSON text.",
    "yaml.marshal": "The value as YAML text (object keys sorted, sets as sequences).",
    "yaml.unmarshal": (
        "The value of the first document in YAML text, read with YAML 1.1 scalars as OPA's Go library does "
        "(`yes` and `on` are true) and every map key turned into a string; invalid YAML is an error."
    ),
    "yaml.is_valid": "Whether the string is valid YAML text.",
    "json.filter": (
        "The object reduced to the given paths (JSON pointer strings like `\"a/b/0\"` or arrays of path "
        "segments), keeping their ancestors."
    ),
    "json.remove": (
        "The object without the given paths (JSON pointer strings like `\"a/b/0\"` or arrays of path segments); "
        "paths that do not exist are ignored."
    ),
    "json.patch": (
        "The value with a JSON Patch (RFC 6902: `add`, `remove`, `replace`, `move`, `copy`, `test`) applied in "
        "order, paths into sets and array-form paths included; a patch that cannot apply is an error."
    ),
    "json.verify_schema": (
        "`[true, null]` when the argument (an object or JSON text) is a valid JSON Schema, else `[false, reason]`."
    ),
    "json.match_schema": (
        "`[true, []]` when the document matches the JSON Schema, else `[false, errors]`, each error an object "
        "with `error`, `type`, `field` and `desc` worded as OPA words them."
    ),
    # ------------------------------------------------------------ URLs
    "urlquery.encode": "The string escaped for a URL query (space as `+`, reserved characters as `%XX`).",
    "urlquery.decode": "The string with URL query escapes (`+`, `%XX`) decoded; a malformed escape is an error.",
    "urlquery.encode_object": (
        "A URL query string from an object whose values are strings, or arrays or sets of strings (one "
        "`key=value` per element), keys in sorted order."
    ),
    "urlquery.decode_object": "An object from a URL query string, each key mapped to the array of its values in order.",
    "uri.parse": (
        "The parts of a URI as an object (`scheme`, `hostname`, `port`, `path`, `raw_path`, `raw_query`, "
        "`fragment`, empty ones left out; user info is never reported); an unparsable URI is an error."
    ),
    "uri.is_valid": (
        "Whether the string parses as a URI (reference) the way Go's `net/url` parses it; `\"\"` is not "
        "valid."
    ),
    # ------------------------------------------------------------ digests and MACs
    "crypto.md5": "The MD5 digest of the string's bytes, as lowercase hex.",
    "crypto.sha1": "The SHA-1 digest of the string's bytes, as lowercase hex.",
    "crypto.sha256": "The SHA-256 digest of the string's bytes, as lowercase hex.",
    "crypto.hmac.md5": "The HMAC-MD5 of the string under the key, as lowercase hex.",
    "crypto.hmac.sha1": "The HMAC-SHA1 of the string under the key, as lowercase hex.",
    "crypto.hmac.sha256": "The HMAC-SHA256 of the string under the key, as lowercase hex.",
    "crypto.hmac.sha512": "The HMAC-SHA512 of the string under the key, as lowercase hex.",
    "crypto.hmac.equal": "Whether two MACs are equal, compared in constant time.",
    # ------------------------------------------------------------ certificates and keys
    "crypto.x509.parse_certificates": (
        "The certificates in PEM text, base64 of PEM, or base64 of DER, each as the JSON of Go's "
        "`x509.Certificate` (`Subject`, `NotBefore`, `DNSNames`, ...); malformed input is an error."
    ),
    "crypto.x509.parse_and_verify_certificates": (
        "Parses a chain given root first and leaf last and verifies it as of now: `[true, certificates]` with the "
        "chain leaf first, or `[false, []]` for an invalid chain or input (never an error)."
    ),
    "crypto.x509.parse_and_verify_certificates_with_options": (
        "Like `crypto.x509.parse_and_verify_certificates`, with verification options `DNSName`, `CurrentTime` "
        "(ns), `KeyUsages` and `MaxConstraintComparisons`; an unknown or ill-typed option is an error."
    ),
    "crypto.x509.parse_certificate_request": (
        "The certificate signing request in PEM text, or base64 of PEM or DER, as the JSON of Go's "
        "`x509.CertificateRequest`; anything else is an error."
    ),
    "crypto.x509.parse_keypair": (
        "The PEM (or base64) certificate and private key as the JSON of Go's `tls.Certificate`; a key that "
        "does not match the certificate is an error."
    ),
    "crypto.x509.parse_rsa_private_key": (
        "The first private key in PEM text (or base64 of PEM) as a JSON Web Key object; empty input is an error."
    ),
    "crypto.parse_private_keys": (
        "Every RSA, EC or PKCS #8 private key in PEM text (or base64 of PEM) as the JSON of Go's key structs; "
        "an empty string gives `null`, as in OPA."
    ),
    # ------------------------------------------------------------ JSON Web Tokens
    "io.jwt.decode": (
        "`[header, payload, signature]` of a compact JWT without verifying it (the signature as hex; a nested "
        "token, `cty: JWT`, is decoded in its place); a malformed token is an error."
    ),
    "io.jwt.decode_verify": (
        "`[true, header, payload]` when the token's signature verifies with the `cert` or `secret` constraint "
        "and its `alg`, `iss`, `aud`, `exp` and `nbf` checks pass (at `time`, default now), else "
        "`[false, {}, {}]`; a token with an `aud` claim needs a matching `aud` constraint."
    ),
    "io.jwt.encode_sign": (
        "A signed compact JWS from header and payload objects and a JSON Web Key object, with the algorithm "
        "named by the header's `alg`."
    ),
    "io.jwt.encode_sign_raw": (
        "A signed compact JWS from the header, payload and JSON Web Key given as JSON text, signed exactly as "
        "written."
    ),
    "io.jwt.verify_hs256": (
        "Whether the token's HMAC-SHA256 signature verifies with the secret; a malformed token is an error."
    ),
    "io.jwt.verify_hs384": (
        "Whether the token's HMAC-SHA384 signature verifies with the secret; a malformed token is an error."
    ),
    "io.jwt.verify_hs512": (
        "Whether the token's HMAC-SHA512 signature verifies with the secret; a malformed token is an error."
    ),
    "io.jwt.verify_rs256": (
        "Whether the token's RSASSA-PKCS1-v1.5 SHA-256 signature verifies with the key (PEM certificate or "
        "public key, or JWK / JWK set); a malformed token is an error."
    ),
    "io.jwt.verify_rs384": (
        "Whether the token's RSASSA-PKCS1-v1.5 SHA-384 signature verifies with the key (PEM certificate or "
        "public key, or JWK / JWK set); a malformed token is an error."
    ),
    "io.jwt.verify_rs512": (
        "Whether the token's RSASSA-PKCS1-v1.5 SHA-512 signature verifies with the key (PEM certificate or "
        "public key, or JWK / JWK set); a malformed token is an error."
    ),
    "io.jwt.verify_ps256": (
        "Whether the token's RSASSA-PSS SHA-256 signature verifies with the key (PEM certificate or public key, "
        "or JWK / JWK set); a malformed token is an error."
    ),
    "io.jwt.verify_ps384": (
        "Whether the token's RSASSA-PSS SHA-384 signature verifies with the key (PEM certificate or public key, "
        "or JWK / JWK set); a malformed token is an error."
    ),
    "io.jwt.verify_ps512": (
        "Whether the token's RSASSA-PSS SHA-512 signature verifies with the key (PEM certificate or public key, "
        "or JWK / JWK set); a malformed token is an error."
    ),
    "io.jwt.verify_es256": (
        "Whether the token's ECDSA signature over a SHA-256 digest verifies with the key (PEM certificate or "
        "public key, or JWK / JWK set), whatever the key's curve, as in OPA; a malformed token is an error."
    ),
    "io.jwt.verify_es384": (
        "Whether the token's ECDSA signature over a SHA-384 digest verifies with the key (PEM certificate or "
        "public key, or JWK / JWK set), whatever the key's curve, as in OPA; a malformed token is an error."
    ),
    "io.jwt.verify_es512": (
        "Whether the token's ECDSA signature over a SHA-512 digest verifies with the key (PEM certificate or "
        "public key, or JWK / JWK set), whatever the key's curve, as in OPA; a malformed token is an error."
    ),
    "io.jwt.verify_eddsa": (
        "Whether the token's EdDSA (Ed25519) signature verifies with the key (PEM certificate or public key, "
        "or JWK / JWK set); a malformed token is an error."
    ),
    # ------------------------------------------------------------ networks
    "net.cidr_contains": (
        "Whether the CIDR contains the IP address or CIDR given second; text that is neither is an error."
    ),
    "net.cidr_overlap": "Deprecated (use `net.cidr_contains`): whether the CIDR contains the IP address.",
    "net.cidr_intersects": "Whether two CIDRs share at least one address.",
    "net.cidr_is_valid": "Whether the string is a valid IPv4 or IPv6 CIDR (an address alone is not).",
    "net.cidr_expand": (
        "Every address in the CIDR as a set of strings, network and broadcast addresses included; pyrego "
        "refuses networks of more than 2^24 addresses."
    ),
    "net.cidr_contains_matches": (
        "The set of `[key1, key2]` pairs where a CIDR in the first argument contains an address or CIDR in the "
        "second; each argument is a string, an array, a set, or an object (keys are indices, members or object "
        "keys, and an element may be an array whose first item is the CIDR)."
    ),
    "net.cidr_merge": (
        "The smallest set of CIDRs covering exactly the given addresses and CIDRs; a lone IPv4 address stands "
        "for its classful network (`10.0.1.1` for `10.0.0.0/8`) as in Go, and a lone IPv6 address is an error."
    ),
    "net.lookup_ip_addr": (
        "The IPv4 and IPv6 addresses the name resolves to, as a set of strings; an error when the name does not "
        "resolve or the engine disallows network access."
    ),
    "http.send": (
        "Sends an HTTP request (`method`, `url`, `headers`, `body`, `timeout`, TLS and cache options) and returns "
        "`status_code`, `status`, `headers`, `body` (decoded JSON or YAML) and `raw_body`; identical requests in "
        "one evaluation share one response, and with `raise_error: false` a failure comes back as an `error` "
        "object instead of an error."
    ),
    "providers.aws.sign_req": (
        "The `http.send` request with AWS Signature Version 4 headers (`Authorization`, `X-Amz-Date`, ...) added, "
        "signed with the given credentials, service and region at the time given in nanoseconds."
    ),
    # ------------------------------------------------------------ time
    "time.now_ns": "The current time in nanoseconds since the Unix epoch, the same for every call in one evaluation.",
    "time.parse_ns": (
        "Nanoseconds since the epoch for a time string read with a Go layout (`2006-01-02`, or a name like "
        "`RFC822`); text that does not fit the layout or is out of range is an error."
    ),
    "time.parse_rfc3339_ns": "Nanoseconds since the epoch for an RFC 3339 timestamp; other text is an error.",
    "time.parse_duration_ns": (
        "Nanoseconds in a Go duration string such as `1h30m` or `250ms`, with OPA's extra `d`, `w` and `y` "
        "units (a year is 365 days)."
    ),
    "time.format": (
        "The time (`ns`, `[ns, tz]` or `[ns, tz, layout]`) as text, RFC 3339 with nanoseconds in UTC unless a "
        "time zone name or Go layout is given."
    ),
    "time.date": "`[year, month, day]` of the time (`ns` or `[ns, tz]`), in UTC unless a time zone is given.",
    "time.clock": "`[hour, minute, second]` of the time (`ns` or `[ns, tz]`), in UTC unless a time zone is given.",
    "time.weekday": "The English name of the day of the week of the time (`ns` or `[ns, tz]`), such as `Monday`.",
    "time.add_date": (
        "The time in nanoseconds after adding years, months and days, normalising overflow as Go does "
        "(January 31 plus one month is March 2 or 3)."
    ),
    "time.diff": (
        "`[years, months, days, hours, minutes, seconds]` between two times (`ns` or `[ns, tz]`), all "
        "non-negative whichever comes first."
    ),
    # ------------------------------------------------------------ identifiers, units and versions
    "uuid.rfc4122": (
        "A random version 4 UUID, the same for the same key throughout one evaluation."
    ),
    "uuid.parse": (
        "The fields of a UUID (`version`, `variant`, and for versions 1 and 2 its `time`, `nodeid`, "
        "`clocksequence`, ...) as an object; undefined for text that is not a UUID."
    ),
    "units.parse": (
        "The number a quantity with an SI or binary suffix stands for (`1K` is 1000, `1Ki` is 1024; suffixes "
        "ignore case except that `m` is milli and `M` mega, so `10m` is 0.01); spaces are an error."
    ),
    "units.parse_bytes": (
        "The whole number of bytes in a size such as `5MB` or `1.5KiB` (units case-insensitive, fractions "
        "truncated); spaces or an unknown unit are an error."
    ),
    "semver.is_valid": "Whether the value is a string holding a valid Semantic Version 2.0.0 (a leading `v` allowed).",
    "semver.compare": (
        "-1, 0 or 1 as the first Semantic Version is lower than, equal to or higher than the second (build "
        "metadata ignored); an invalid version is an error."
    ),
    # ------------------------------------------------------------ GraphQL
    "graphql.parse_query": "The abstract syntax tree of a GraphQL query as an object; a syntax error is an error.",
    "graphql.parse_schema": "The abstract syntax tree of a GraphQL schema as an object; a syntax error is an error.",
    "graphql.parse": (
        "`[query AST, schema AST]` after validating the query against the schema (text or AST objects); an "
        "invalid query or schema is an error."
    ),
    "graphql.parse_and_verify": (
        "`[true, query AST, schema AST]` when the query is valid against the schema, else `[false, {}, {}]` "
        "(never an error)."
    ),
    "graphql.is_valid": "Whether the GraphQL query (text or AST) is valid against the schema (text or AST).",
    "graphql.schema_is_valid": "Whether the GraphQL schema (text or AST) is valid.",
}
"""Builtin name -> one-sentence description, for every builtin pyrego registers."""
