"use client";

import { createContext, startTransition, useActionState, useContext, useId, type ReactNode } from "react";
import type { FormState } from "@/lib/dashboard/form-state";
import { buttonClass, ErrorMessage } from "./page";

const FormContext = createContext<{ error: FormState["error"]; pending: boolean }>({ error: undefined, pending: false });

/**
 * A form posting to a server action that answers with the API's error (message and per-field
 * details, keyed by the same bracket names the fields use), shown next to the fields.
 */
export function ActionForm({
  action,
  children,
  className = "space-y-4",
  success,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  children: ReactNode;
  className?: string;
  success?: (state: FormState) => ReactNode;
}) {
  const [state, formAction, pending] = useActionState(action, {});
  return (
    <form
      className={className}
      // Submitted by hand rather than through `action`, which resets the fields afterwards: a
      // developer fixing the one field an error names must not have to type the others again.
      onSubmit={(e) => {
        e.preventDefault();
        const data = new FormData(e.currentTarget);
        startTransition(() => formAction(data));
      }}
    >
      <FormFeedback error={state.error} pending={pending}>
        {state.ok && success?.(state)}
        {children}
      </FormFeedback>
    </form>
  );
}

/** A submission's error for the fields inside: its message above them, each field's detail beside that field. */
export function FormFeedback({ error, pending, children }: { error: FormState["error"]; pending: boolean; children: ReactNode }) {
  return (
    <FormContext.Provider value={{ error, pending }}>
      {error && <ErrorMessage>{error.message}</ErrorMessage>}
      {children}
    </FormContext.Provider>
  );
}

const inputClass = "block w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-1 focus:ring-indigo-500";

/** A labelled control; the label names the control alone (a wrapping label would add the control's value to its name). */
export function Field({ label, name, hint, id, children }: { label: string; name: string; hint?: ReactNode; id: string; children: ReactNode }) {
  const error = useContext(FormContext).error?.details?.[name];
  return (
    <div className="block text-sm">
      <label htmlFor={id} className="mb-1 block font-medium text-slate-700">
        {label}
      </label>
      {children}
      {hint && !error && <span className="mt-1 block text-xs text-slate-500">{hint}</span>}
      {error && <span className="mt-1 block text-xs text-rose-700">{error.message}</span>}
    </div>
  );
}

/** A player id typed or picked from the project's players (a datalist: any id may still be typed). */
export function PlayerField({ id, players, hint, required, defaultValue }: { id: string; players: { id: string; name: string }[]; hint?: ReactNode; required?: boolean; defaultValue?: string }) {
  return (
    <Field label="Player" name="player" id={id} hint={hint}>
      <input
        id={id}
        name="player"
        list={`${id}s`}
        required={required}
        defaultValue={defaultValue}
        placeholder="pla_…"
        className="block w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 font-mono text-sm shadow-sm"
      />
      <datalist id={`${id}s`}>
        {players.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </datalist>
    </Field>
  );
}

type InputProps = React.InputHTMLAttributes<HTMLInputElement> & { label: string; name: string; hint?: ReactNode };
export function TextInput({ label, name, hint, ...props }: InputProps) {
  const id = useId();
  return (
    <Field label={label} name={name} hint={hint} id={id}>
      <input id={id} name={name} className={inputClass} {...props} />
    </Field>
  );
}

type TextAreaProps = React.TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; name: string; hint?: ReactNode };
export function TextArea({ label, name, hint, ...props }: TextAreaProps) {
  const id = useId();
  return (
    <Field label={label} name={name} hint={hint} id={id}>
      <textarea id={id} name={name} className={`${inputClass} font-mono text-xs`} rows={6} {...props} />
    </Field>
  );
}

type SelectProps = React.SelectHTMLAttributes<HTMLSelectElement> & { label: string; name: string; hint?: ReactNode; options: (string | [string, string])[] };
export function Select({ label, name, hint, options, ...props }: SelectProps) {
  const id = useId();
  return (
    <Field label={label} name={name} hint={hint} id={id}>
      <select id={id} name={name} className={inputClass} {...props}>
        {options.map((o) => {
          const [value, text] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
    </Field>
  );
}

export function SubmitButton({ children, variant = "primary", confirm }: { children: ReactNode; variant?: "primary" | "secondary" | "danger"; confirm?: string }) {
  const { pending } = useContext(FormContext);
  return (
    <button
      type="submit"
      disabled={pending}
      className={buttonClass(variant)}
      onClick={(e) => {
        if (confirm && !window.confirm(confirm)) e.preventDefault();
      }}
    >
      {pending ? "Working…" : children}
    </button>
  );
}
