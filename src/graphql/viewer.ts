import { builder, type Viewer } from './builder.js';

const ViewerRef = builder.objectRef<Viewer>('Viewer').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    isAdmin: t.exposeBoolean('isAdmin'),
    roles: t.stringList({
      description:
        "The roles of the viewer's token (auth.tokens[].roles): approvers policies name them. None without auth.",
      resolve: (v) => [...v.roles],
    }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: ViewerRef,
    description: 'Who the request is authenticated as.',
    resolve: (_root, _args, ctx) => ctx.viewer,
  }),
);
