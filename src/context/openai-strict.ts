/** A JSON Schema object describing a tool's input. */
export type JsonSchema = Record<string, unknown>;

// Keywords OpenAI's strict mode rejects; a schema that needs one is sent without `strict`.
const UNSUPPORTED = [
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "patternProperties",
  "$ref",
  "dependentSchemas",
];

/**
 * The schema in OpenAI's strict form — every property required, `additionalProperties: false`, optional fields
 * nullable — or null when strict mode cannot express it (maps, `oneOf`, references).
 */
export function toStrictSchema(schema: JsonSchema): JsonSchema | null {
  if (UNSUPPORTED.some((key) => key in schema)) return null;
  const { default: _default, ...node } = schema;
  if (Array.isArray(node.anyOf)) {
    const variants = (node.anyOf as JsonSchema[]).map(toStrictSchema);
    return variants.every((v) => v !== null) ? { ...node, anyOf: variants } : null;
  }
  if (node.type === "array" && isSchema(node.items)) {
    const items = toStrictSchema(node.items);
    return items && { ...node, items };
  }
  if (node.type !== "object") return node;
  if (node.additionalProperties !== undefined && node.additionalProperties !== false) return null;
  const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((node.required ?? []) as string[]);
  const strict: Record<string, JsonSchema> = {};
  for (const [key, property] of Object.entries(properties)) {
    const converted = toStrictSchema(property);
    if (!converted) return null;
    strict[key] = required.has(key) ? converted : nullable(converted);
  }
  return { ...node, properties: strict, required: Object.keys(strict), additionalProperties: false };
}

/**
 * Undoes what strict mode added to a call's input: `null` in a field the original schema has as optional and
 * not nullable is removed, so the tool's own validation sees the field as absent.
 */
export function dropStrictNulls(schema: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    return isSchema(schema.items)
      ? value.map((item) => dropStrictNulls(schema.items as JsonSchema, item))
      : value;
  }
  if (typeof value !== "object" || value === null || !isSchema(schema.properties)) return value;
  const properties = schema.properties as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    // Only the schema's own properties: `properties.__proto__` would otherwise find `Object.prototype`.
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (field === null && property && !required.has(key) && !acceptsNull(property)) continue;
    // A JSON "__proto__" key is an own property of the parsed input; `result[key] =` would make it the copy's
    // prototype (its fields then read as inputs), so every key is defined as an own property, as JSON.parse does.
    Object.defineProperty(result, key, {
      value: property ? dropStrictNulls(property, field) : field,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (acceptsNull(schema)) return schema;
  if (typeof schema.type === "string" && !("anyOf" in schema)) {
    const withNull = { ...schema, type: [schema.type, "null"] };
    return Array.isArray(schema.enum) ? { ...withNull, enum: [...schema.enum, null] } : withNull;
  }
  return { anyOf: [schema, { type: "null" }] };
}

function acceptsNull(schema: JsonSchema): boolean {
  const type = schema.type;
  return (
    type === "null" ||
    (Array.isArray(type) && type.includes("null")) ||
    (Array.isArray(schema.enum) && schema.enum.includes(null)) ||
    (Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some(acceptsNull))
  );
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
