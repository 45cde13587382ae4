import { REFUSAL_CODES, type RefusalCode } from '../domain/refusals.js';
import { builder } from './builder.js';

/** The codes of refusals (src/domain/refusals.ts), as the API names them. */
export const USER_ERROR_CODES = REFUSAL_CODES;
export type UserErrorCode = RefusalCode;

export interface UserError {
  code: UserErrorCode;
  message: string;
  field: string[] | null;
}

export const userError = (code: UserErrorCode, message: string, field: string[] | null = null): UserError => ({
  code,
  message,
  field,
});

export const UserErrorCodeEnum = builder.enumType('UserErrorCode', { values: USER_ERROR_CODES });

export const UserErrorRef = builder.objectRef<UserError>('UserError').implement({
  description: 'A problem with what the caller asked for. Faults of the server are GraphQL errors instead.',
  fields: (t) => ({
    code: t.field({ type: UserErrorCodeEnum, resolve: (e) => e.code }),
    message: t.exposeString('message'),
    field: t.exposeStringList('field', {
      nullable: true,
      description: 'Path to the input field at fault, e.g. ["input", "content", "instructions"].',
    }),
  }),
});
