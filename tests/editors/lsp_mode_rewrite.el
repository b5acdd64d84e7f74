;;; lsp_mode_rewrite.el --- batch Emacs/lsp-mode driver for tests/editors/test_lsp_mode.py  -*- lexical-binding: t -*-

;; Usage: emacs -Q --batch -l tests/editors/lsp_mode_rewrite.el (in the folder holding file.py)
;; Loads FLOWEDIT_EMACS_CONFIG (the lsp-mode configuration docs/editors.md gives) like an init file, visits
;; file.py (python-mode starts lsp-mode, which starts `flowedit lsp'), marks the first occurrence of
;; FLOWEDIT_EMACS_TARGET, picks the code action "Rewrite selection…" as `lsp-execute-code-action' would,
;; and waits for the server's `flowedit/status' that ends the rewrite.  Then "Review file" from the code
;; actions (its findings in Flymake, as lsp-mode shows them), "Apply fix: …" on the line of
;; FLOWEDIT_EMACS_FIX, "Dismiss this … finding" on the line of FLOWEDIT_EMACS_DISMISS, and "Review file"
;; again.  Writes FLOWEDIT_EMACS_SUMMARY (JSON) and FLOWEDIT_EMACS_OUT (the buffer).
;; Exit 0 = the driver got through (the test judges the outcome).

(setq native-comp-deferred-compilation nil)
(require 'package)
(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
(package-initialize)
(require 'json)
(require 'cl-lib)

(defvar lmr-summary nil)
(defvar lmr-errors nil)
(defvar lmr-statuses nil)
(defun lmr-env (name) (or (getenv name) (error "%s is not set" name)))
(defun lmr-note (key value) (setf (alist-get key lmr-summary) value))

(defun lmr-finish (buffer)
  (let ((coding-system-for-write 'utf-8-unix))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (write-region (point-min) (point-max) (lmr-env "FLOWEDIT_EMACS_OUT") nil 'silent)))
    (lmr-note 'errors (vconcat (reverse lmr-errors)))
    (lmr-note 'emacs emacs-version)
    (lmr-note 'lsp_mode (package-version-join (package-desc-version (cadr (assq 'lsp-mode package-alist)))))
    (with-current-buffer (messages-buffer)
      (lmr-note 'messages (buffer-substring-no-properties (point-min) (point-max))))
    (dolist (b (buffer-list))
      (when (string-prefix-p "*lsp-log: flowedit" (buffer-name b))
        (with-current-buffer b (lmr-note 'io (buffer-substring-no-properties (point-min) (point-max))))))
    (when (get-buffer "*lsp-log*")  ; the server's window/logMessage
      (with-current-buffer "*lsp-log*"
        (lmr-note 'lsp_log (buffer-substring-no-properties (point-min) (point-max)))))
    (write-region (json-encode lmr-summary) nil (lmr-env "FLOWEDIT_EMACS_SUMMARY") nil 'silent))
  (kill-emacs (if lmr-errors 1 0)))

(defun lmr-wait (what predicate timeout)
  (let ((deadline (+ (float-time) timeout)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (or value (error "waited %g s for %s, in vain" timeout what))))

;; ---------------------------------------------------------------- the review, after the rewrite
(defun lmr-action (title)
  "Run the code action TITLE of point's line as `lsp-execute-code-action' does; the titles offered."
  (let* ((actions (lsp-code-actions-at-point))
         (titles (mapcar #'lsp:code-action-title actions))
         (action (cl-find title actions :key #'lsp:code-action-title :test #'string-prefix-p)))
    (unless action (error "no %S among %S" title titles))
    (lsp-execute-code-action action)
    (vconcat titles)))

(defun lmr-flymake ()
  "What Flymake shows: (line text type) of each diagnostic, in line order."
  (unless (or lsp-diagnostics--flymake-report-fn (flymake-running-backends))
    (flymake-start))  ; (an idle Emacs starts it; a batch one never goes idle)
  (vconcat (mapcar (lambda (d) (vector (line-number-at-pos (flymake-diagnostic-beg d))
                                       (flymake-diagnostic-text d) (symbol-name (flymake-diagnostic-type d))))
                   (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a)
                                                                (flymake-diagnostic-beg b)))))))

(defun lmr-review-end (&optional other-than)
  "The review figures of the `flowedit/status' that ends a review (not the one whose id is OTHER-THAN)."
  (lmr-wait "the end of the review"
            (lambda () (cl-loop for status in lmr-statuses
                                for review = (gethash "review" status)
                                when (and (hash-table-p review)
                                          (not (equal (gethash "state" review) "reviewing"))
                                          (not (equal (gethash "id" review) other-than)))
                                return review))
            30))

(defun lmr-shown-until (what predicate)
  "What Flymake shows once PREDICATE holds for it and for the count of lsp-mode's diagnostics."
  (lmr-wait what (lambda () (let ((shown (lmr-flymake)))
                              (and (funcall predicate shown (length (lsp--get-buffer-diagnostics))) shown)))
            15))

(defun lmr-review ()
  "\"Review file\" from the code actions at the top: its end, its findings in Flymake; then \"Apply fix\" on
the line of FLOWEDIT_EMACS_FIX: the buffer, and what Flymake shows then; then `lmr-dismiss'."
  (goto-char (point-min))
  (lmr-note 'review_actions (lmr-action "Review file"))
  (let ((review (lmr-review-end)))
    (lmr-note 'review (list (cons 'state (gethash "state" review)) (cons 'findings (gethash "findings" review))))
    (lmr-note 'findings (lmr-wait "the findings in Flymake"
                                  (lambda () (let ((shown (lmr-flymake)))
                                               (and (= (length shown) (gethash "findings" review)) shown)))
                                  15)))
  (lmr-note 'lsp_diagnostics (length (lsp--get-buffer-diagnostics)))
  (goto-char (point-min))
  (search-forward (lmr-env "FLOWEDIT_EMACS_FIX"))
  (let ((before (buffer-string)))
    (lmr-note 'fix_actions (lmr-action "Apply fix: "))
    (lmr-wait "the fix" (lambda () (not (equal before (buffer-string)))) 15))
  (lmr-note 'fixed (buffer-substring-no-properties (point-min) (point-max)))
  (let ((left (1- (length (alist-get 'findings lmr-summary)))))
    (lmr-note 'after_fix (lmr-shown-until "the fixed finding gone (lsp-mode's diagnostics and Flymake)"
                                          (lambda (shown diagnostics) (= (length shown) diagnostics left)))))
  (lmr-dismiss))

(defun lmr-dismiss ()
  "\"Dismiss this … finding\" on the line of FLOWEDIT_EMACS_DISMISS: what Flymake shows then; then \"Review
file\" again: its end, and what Flymake and lsp-mode show after it."
  (goto-char (point-min))
  (search-forward (lmr-env "FLOWEDIT_EMACS_DISMISS"))
  (let ((left (1- (length (alist-get 'after_fix lmr-summary))))
        (first (gethash "id" (lmr-review-end))))
    (lmr-note 'dismiss_actions (lmr-action "Dismiss this "))
    (lmr-note 'after_dismiss (lmr-shown-until "the dismissed finding gone (lsp-mode's diagnostics and Flymake)"
                                              (lambda (shown diagnostics) (= (length shown) diagnostics left))))
    (goto-char (point-min))
    (lmr-action "Review file")
    (let ((review (lmr-review-end first)))
      ;; (its findings were published before the status that ends it: lsp-mode and Flymake have them now)
      (lmr-note 'review_again (list (cons 'state (gethash "state" review)) (cons 'findings (gethash "findings" review))
                                    (cons 'dismissed (gethash "dismissed" review))))
      (lmr-note 'shown_again (lmr-flymake))
      (lmr-note 'lsp_diagnostics_again (length (lsp--get-buffer-diagnostics))))))

(let ((buffer nil))
  (condition-case err
      (progn
        (load (lmr-env "FLOWEDIT_EMACS_CONFIG") nil t)
        (require 'lsp-mode)
        ;; a headless session: no questions, no session file in HOME, nothing but the server
        (setq lsp-session-file (expand-file-name "lsp-session" (lmr-env "HOME"))
              lsp-auto-guess-root t lsp-enable-file-watchers nil lsp-headerline-breadcrumb-enable nil
              lsp-modeline-code-actions-enable nil lsp-modeline-diagnostics-enable nil lsp-enable-snippet nil
              lsp-restart 'ignore lsp-keep-workspace-alive nil lsp-diagnostics-provider :flymake
              lsp-log-io t)
        (transient-mark-mode 1)
        (setq buffer (find-file "file.py"))
        (with-current-buffer buffer
          (let ((client (gethash 'flowedit lsp-clients)))
            (unless client (error "the configuration registered no lsp-mode client `flowedit'"))
            (puthash "flowedit/status" (lambda (_workspace params) (push params lmr-statuses))
                     (lsp--client-notification-handlers client)))
          (lmr-wait "lsp-mode to initialize flowedit"
                    (lambda () (cl-some (lambda (w) (eq (lsp--workspace-status w) 'initialized)) (lsp-workspaces)))
                    30)
          (goto-char (point-min))
          (search-forward (lmr-env "FLOWEDIT_EMACS_TARGET"))
          (push-mark (match-beginning 0) t t)
          (let* ((actions (lsp-code-actions-at-point))
                 (titles (mapcar (lambda (a) (lsp:code-action-title a)) actions))
                 (rewrite (cl-find "Rewrite selection…" actions :key #'lsp:code-action-title :test #'equal)))
            (lmr-note 'actions (vconcat titles))
            (unless rewrite (error "no \"Rewrite selection…\" among %S" titles))
            (deactivate-mark)
            (goto-char (point-min))
            (lsp-execute-code-action rewrite))
          (let ((request (lmr-wait "the flowedit/status that ends the rewrite"
                                   (lambda ()
                                     (cl-loop for status in lmr-statuses
                                              for request = (gethash "request" status)
                                              when (and (hash-table-p request) (gethash "outcome" request))
                                              return request))
                                   45)))
            (lmr-note 'outcome (gethash "outcome" request))
            (lmr-note 'tokens (gethash "tokens" request))
            (lmr-note 'edits_applied (gethash "edits_applied" request))
            (lmr-note 'text (buffer-substring-no-properties (point-min) (point-max))))
          (lmr-review)))
    (error (push (format "%S" err) lmr-errors)))
  (lmr-finish buffer))
;;; lsp_mode_rewrite.el ends here
