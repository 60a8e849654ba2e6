import type { FastifyReply } from 'fastify';
import { type ErrorCode, type HookdError, problemType } from '../errors/index.js';

/** RFC 9457 problem details, the one error shape of the API. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: { field: string; message: string; line?: number; column?: number }[];
}

export function toProblem(err: HookdError): Problem {
  return {
    type: problemType(err.code),
    title: err.title,
    status: err.status,
    detail: err.message,
    code: err.code,
    ...(err.errors && { errors: err.errors }),
  };
}

export function sendProblem(reply: FastifyReply, err: HookdError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  return reply.code(err.status).type('application/problem+json').send(toProblem(err));
}
