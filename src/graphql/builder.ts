import SchemaBuilder from '@pothos/core';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
import type { Services } from '../services.js';

export interface Viewer {
  id: string;
  isAdmin: boolean;
}

export interface GraphQLContext {
  viewer: Viewer;
  services: Services;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: {
    DateTime: { Input: Date; Output: string | Date };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultInputFieldRequiredness: false;
  DefaultFieldNullability: false;
}>({ defaultFieldNullability: false });

builder.addScalarType('DateTime', DateTimeResolver, {
  description: 'An RFC 3339 date-time in UTC, e.g. 2026-12-02T09:00:00.000Z.',
});
builder.addScalarType('JSON', JSONResolver, {
  description: 'Any JSON value: object, array, string, number, boolean or null.',
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
