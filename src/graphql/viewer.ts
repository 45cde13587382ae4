import { builder, type Viewer } from './builder.js';

export const ViewerRef = builder.objectRef<Viewer>('Viewer').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    isAdmin: t.exposeBoolean('isAdmin'),
    name: t.string({
      nullable: true,
      description: 'The display name their identity provider gives; null for static tokens.',
      resolve: (v) => v.name ?? null,
    }),
    roles: t.stringList({
      description:
        "The roles of the viewer's credentials now (auth.tokens[].roles, or the groups of their identity provider's token through auth.oidc.roleMap): approvers policies name them. None without auth.",
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
