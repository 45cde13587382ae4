import { builder, type Viewer } from './builder.js';

const ViewerRef = builder.objectRef<Viewer>('Viewer').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    isAdmin: t.exposeBoolean('isAdmin'),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: ViewerRef,
    description: 'Who the request is authenticated as.',
    resolve: (_root, _args, ctx) => ctx.viewer,
  }),
);
