;;; flowedit.el --- Streamed AI rewrites and completions from flowedit, through Eglot  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience
;; URL: see docs/editors.md of the flowedit repository

;;; Commentary:

;; Runs `flowedit lsp' as the Eglot server of your buffers (`flowedit-modes') and adds what plain Eglot
;; lacks for it:
;;   `flowedit-rewrite'   rewrite the region (or the line) following an instruction read in the minibuffer
;;   `flowedit-interrupt' stop it; `flowedit-redirect' a new instruction for the same region, mid-stream;
;;   `flowedit-revert'    put back what the last rewrite replaced, in one step; `flowedit-continue'
;;   next edits           the edit you are likely to make next, shown as an overlay (old text struck
;;                        through, new text beside it): TAB jumps to it, TAB again applies it, C-g drops it
;;   `flowedit-review'    review the region, the file, its uncommitted changes (C-u) or the workspace's
;;                        (C-u C-u): the findings show in Flymake, their fixes are Eglot's code actions
;; The answer streams into the buffer while you go on working.  The server sends a rewrite's edits as
;; `flowedit/applyRewriteEdit' (this package declares `experimental.flowedit.rewriteEdits'); each one is
;; checked against the buffer's version, applied without a confirmation prompt or a message, and joined
;; to the rewrite's undo step: one `undo' takes back the whole rewrite.  Changes go to the server
;; `flowedit-send-changes-idle-time' (0.05 s) after a keystroke, in flowedit's buffers only (Eglot's
;; 0.5 s would hold a stream back while you type).  `completion-at-point' (C-M-i) inserts the server's
;; whole suggestion.  The mode line shows the state, the model, and a rewrite's tokens and tok/s.
;;
;;   (add-to-list 'load-path "/path/to/flowedit/editors/emacs")
;;   (require 'flowedit)
;;   (setq flowedit-initialization-options '(:endpoint "wss://api.openai.com/v1/responses"))
;;   (add-hook 'python-mode-hook #'eglot-ensure)
;;   (define-key flowedit-mode-map (kbd "C-c f") flowedit-command-map)
;;
;; Eglot runs one server per buffer: in `flowedit-modes' flowedit is that server.

;;; Code:

(require 'eglot)
(require 'cl-lib)
(require 'subr-x)

(defgroup flowedit nil
  "Streamed AI rewrites and completions from the flowedit language server."
  :group 'tools :prefix "flowedit-")

(defcustom flowedit-command '("flowedit" "lsp")
  "The command that runs the flowedit language server."
  :type '(repeat string))

(defcustom flowedit-modes '(python-mode python-ts-mode js-mode typescript-mode c-mode c++-mode go-mode
                            rust-mode java-mode ruby-mode sh-mode emacs-lisp-mode)
  "Major modes whose buffers Eglot connects to flowedit."
  :type '(repeat symbol))

(defcustom flowedit-initialization-options nil
  "flowedit's settings, sent as `initializationOptions' (a plist).
:endpoint, :model, :api_key_env, ... (flowedit's README)."
  :type 'plist)

(defcustom flowedit-send-changes-idle-time 0.05
  "Seconds of idleness after which Eglot reports changes in flowedit's buffers."
  :type 'number)

(defclass flowedit-server (eglot-lsp-server) ()
  :documentation "The flowedit language server.")

;;;###autoload
(defun flowedit-register ()
  "Make flowedit the Eglot server of `flowedit-modes' (done when this file loads)."
  (setq eglot-server-programs (cl-remove-if (lambda (entry) (eq (cdr-safe entry) #'flowedit--contact))
                                            eglot-server-programs))
  (push (cons flowedit-modes #'flowedit--contact) eglot-server-programs))

(defun flowedit--contact (&optional _interactive)
  (cons 'flowedit-server flowedit-command))

(cl-defmethod eglot-initialization-options ((_server flowedit-server))
  (or flowedit-initialization-options eglot--{}))

(cl-defmethod eglot-client-capabilities ((_server flowedit-server))
  (let ((capabilities (cl-call-next-method)))
    (plist-put capabilities :experimental '(:flowedit (:rewriteEdits t)))))

;;; ------------------------------------------------------------------------- the server's edits

(defvar flowedit-edit-functions nil
  "Functions called with a rewrite's id after each of its edits is applied.")

(defvar-local flowedit--undo-mark nil
  "(ID . LIST): `buffer-undo-list' right after the last edit of rewrite ID.")

(defun flowedit--undo-join (id)
  "Join the next change to rewrite ID's undo step.
Unless something else changed the buffer since the rewrite's last edit."
  (if (and (equal (car flowedit--undo-mark) id) (listp buffer-undo-list))
      (let ((list buffer-undo-list))
        (while (and list (null (car list))) (setq list (cdr list))) ; boundaries only
        (if (eq list (cdr flowedit--undo-mark))
            (setq buffer-undo-list list)
          (undo-boundary)))
    (undo-boundary)))

(defun flowedit--apply-edits (edits)
  "Apply the LSP text EDITS (one document state) to the current buffer."
  (save-excursion
    (save-restriction
      (widen)
      (let ((regions (mapcar (lambda (edit)
                               (cons (plist-get edit :newText)
                                     (eglot--range-region (plist-get edit :range) 'markers)))
                             edits)))
        (dolist (region (reverse regions))
          (let* ((text (car region)) (from (cadr region)) (to (cddr region))
                 (beg (marker-position from)) (end (marker-position to)))
            ;; one change per edit, as Eglot's own edits make: Eglot counts a version per change it sees,
            ;; and the server names the next edit's version by that count
            (let ((inhibit-modification-hooks t))
              (run-hook-with-args 'before-change-functions beg end)
              (goto-char beg)
              (delete-region beg end)
              (insert text)
              (run-hook-with-args 'after-change-functions beg (+ beg (length text)) (- end beg)))
            (set-marker from nil)
            (set-marker to nil)))))))

(defun flowedit--apply-workspace-edit (edit id)
  "Apply the WorkspaceEdit EDIT (of rewrite ID, or nil).
Returns workspace/applyEdit's answer, as a plist."
  (let ((changes (append (plist-get edit :documentChanges) nil)))
    (if (not (and changes (cl-every (lambda (c) (plist-get c :textDocument)) changes)))
        (list :applied :json-false :failureReason "flowedit.el takes text document edits only")
      (catch 'answer
        (dolist (change changes)
          (let* ((document (plist-get change :textDocument))
                 (buffer (find-buffer-visiting (eglot--uri-to-path (plist-get document :uri))))
                 (version (plist-get document :version)))
            (unless buffer
              (throw 'answer (list :applied :json-false :failureReason "the file is not open")))
            (with-current-buffer buffer
              (when (and version (not (equal version eglot--versioned-identifier)))
                ;; the user typed since (not reported yet): the server sends the edit again on the report
                (throw 'answer (list :applied :json-false
                                     :failureReason (format "Edits on `%s' require version %d, you have %d"
                                                            (buffer-name) version eglot--versioned-identifier))))
              (if id (flowedit--undo-join id) (undo-boundary))
              (flowedit--apply-edits (append (plist-get change :edits) nil))
              (setq flowedit--undo-mark (and id (cons id buffer-undo-list)))
              (when id (run-hook-with-args 'flowedit-edit-functions id)))))
        (list :applied t)))))

(cl-defmethod eglot-handle-request ((_server flowedit-server) (_method (eql flowedit/applyRewriteEdit))
                                    &key edit rewrite &allow-other-keys)
  (flowedit--apply-workspace-edit edit rewrite))

;; the revert (and anything else) comes as workspace/applyEdit: applied the same way, without Eglot's
;; confirmation prompt and "Edit successful!" message
(cl-defmethod eglot-handle-request ((_server flowedit-server) (_method (eql workspace/applyEdit))
                                    &key edit &allow-other-keys)
  (flowedit--apply-workspace-edit edit nil))

;;; ------------------------------------------------------------------------- status

(defvar flowedit--status nil "The last `flowedit/status' (a plist).")
(defvar flowedit--figures (make-hash-table :test #'equal) "Rewrite id -> its last figures.")
(defvar-local flowedit--running nil "The id of the rewrite streaming into this buffer.")
(defvar-local flowedit--last nil "The id of the last rewrite started in this buffer.")

(defun flowedit--outcome (id)
  "How rewrite ID ended (\"finished\", \"interrupted\", ...), or nil while it runs."
  (plist-get (gethash id flowedit--figures) :outcome))

(defun flowedit--review-status (review)
  "Keep the figures REVIEW of a `flowedit/status'; say how it ended once it did."
  (let* ((id (plist-get review :id))
         (before (gethash id flowedit--figures)))
    (puthash id review flowedit--figures)
    (when (and (not (equal (plist-get review :state) "reviewing"))
               (or (null before) (equal (plist-get before :state) "reviewing")))
      (message "FlowEdit review: %s" (plist-get review :message)))))

(defun flowedit-rewrite-status (id)
  "The last figures the server sent for rewrite ID.
A plist: :outcome, :tokens, :ttft_ms, :tokens_per_s, ..."
  (gethash id flowedit--figures))

(defvar flowedit-status-functions nil
  "Functions called with each `flowedit/status' the server sends.
The argument is a plist: :state :model :request ...")

(cl-defmethod eglot-handle-notification ((_server flowedit-server) (_method (eql flowedit/status))
                                         &rest params)
  (setq flowedit--status params)
  (when (plist-get params :review) (flowedit--review-status (plist-get params :review)))
  (run-hook-with-args 'flowedit-status-functions params)
  (let ((request (plist-get params :request)))
    (when (and request (equal (plist-get request :kind) "rewrite"))
      (puthash (plist-get request :id) request flowedit--figures)
      (when (plist-get request :outcome)
        (dolist (buffer (buffer-list))
          (with-current-buffer buffer
            (when (equal flowedit--running (plist-get request :id))
              (setq flowedit--running nil)))))))
  (force-mode-line-update t))

(defun flowedit-mode-line ()
  "What the mode line shows in flowedit's buffers."
  (let* ((status flowedit--status)
         (request (plist-get status :request))
         (review (plist-get status :review))
         (model (plist-get status :model)))
    (concat
     " FlowEdit"
     (cond ((not status) " starting")
           ((and flowedit--running request (equal (plist-get request :id) flowedit--running))
            (concat (format " streaming %s tok" (or (plist-get request :tokens) 0))
                    (when (numberp (plist-get request :tokens_per_s))
                      (format " %d tok/s" (plist-get request :tokens_per_s)))
                    (when (numberp (plist-get request :ttft_ms))
                      (format " TTFT %d ms" (plist-get request :ttft_ms)))))
           ((equal (plist-get review :state) "reviewing") (format " %s" (plist-get review :message)))
           (t (format " %s" (plist-get status :state))))
     (when (stringp model) (format " (%s)" model)))))

;;; ------------------------------------------------------------------------- next edits

(defface flowedit-next-edit-old '((t :strike-through t :inherit shadow))
  "The text a next edit would replace.")
(defface flowedit-next-edit-new '((t :inherit success :slant italic))
  "The text a next edit would put in.")

(defvar flowedit-next-edit-functions nil
  "Functions called with each `flowedit/nextEdit' once drawn or cleared.
The argument is a plist: :uri :id :edits ... (:cleared when it went).")
(defvar-local flowedit--next-edit nil "The next edit shown in this buffer: (ID . EDITS).")
(defvar-local flowedit--next-edit-overlays nil)

(defun flowedit--clear-next-edit ()
  (mapc #'delete-overlay flowedit--next-edit-overlays)
  (setq flowedit--next-edit-overlays nil
        flowedit--next-edit nil)
  (flowedit-next-edit-mode -1))

(defun flowedit--draw-next-edit (edit)
  "An overlay for the LSP text EDIT.
Its old text struck through, its new text after it."
  (let* ((region (eglot--range-region (plist-get edit :range)))
         (overlay (make-overlay (car region) (cdr region) nil t nil))
         (new (plist-get edit :newText)))
    (overlay-put overlay 'flowedit-next-edit t)
    (when (< (car region) (cdr region)) (overlay-put overlay 'face 'flowedit-next-edit-old))
    (unless (string-empty-p new) (overlay-put overlay 'after-string (propertize new 'face 'flowedit-next-edit-new)))
    overlay))

(cl-defmethod eglot-handle-notification ((_server flowedit-server) (_method (eql flowedit/nextEdit))
                                         &rest params)
  (let ((buffer (find-buffer-visiting (eglot--uri-to-path (plist-get params :uri))))
        (edits (append (plist-get params :edits) nil))
        (version (plist-get params :version)))
    (when buffer
      (with-current-buffer buffer
        (flowedit--clear-next-edit)
        ;; (for another version than the buffer's, not drawn: the user typed since, a newer one comes)
        (when (and edits (or (null version) (equal version eglot--versioned-identifier)))
          (save-restriction
            (widen)
            (setq flowedit--next-edit-overlays (mapcar #'flowedit--draw-next-edit edits)))
          (setq flowedit--next-edit (cons (plist-get params :id) edits))
          (flowedit-next-edit-mode 1))
        (run-hook-with-args 'flowedit-next-edit-functions params)))))

(defun flowedit-next-edit-tab ()
  "Move to the next edit shown, or apply it when point is on its line."
  (interactive)
  (let ((first (car (cdr flowedit--next-edit))))
    (unless first (user-error "FlowEdit: no next edit is shown"))
    (let ((start (car (eglot--range-region (plist-get first :range)))))
      (if (= (line-number-at-pos start) (line-number-at-pos))
          (flowedit-accept-next-edit)
        (goto-char start)))))

(defun flowedit-accept-next-edit ()
  "Apply the next edit shown in this buffer."
  (interactive)
  (let ((id (car flowedit--next-edit)))
    (unless id (user-error "FlowEdit: no next edit is shown"))
    (flowedit--command "flowedit.acceptNextEdit" (list :uri (flowedit--uri) :id id))))

(defun flowedit-dismiss-next-edit ()
  "Drop the next edit shown in this buffer (then quit as \[keyboard-quit] does)."
  (interactive)
  (let ((id (car flowedit--next-edit)))
    (flowedit--clear-next-edit)
    (when id (flowedit--command "flowedit.dismissNextEdit" (list :uri (flowedit--uri) :id id))))
  (when (called-interactively-p 'interactive) (keyboard-quit)))

(defvar flowedit-next-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'flowedit-next-edit-tab)
    (define-key map [remap keyboard-quit] #'flowedit-dismiss-next-edit)
    map)
  "Keys while a next edit is shown.")

(define-minor-mode flowedit-next-edit-mode
  "A next edit is shown: TAB jumps to it and applies it, C-g drops it."
  :lighter nil :keymap flowedit-next-edit-mode-map)

(defvar-local flowedit--cursor-line nil "The line the server was last told the cursor is on.")

(defun flowedit--tell-cursor ()
  "On `post-command-hook': tell the server the cursor's new line.
As `flowedit/cursor', when the line changed."
  (let ((line (line-number-at-pos))
        (server (eglot-current-server)))
    (when (and (not (equal line flowedit--cursor-line)) (cl-typep server 'flowedit-server))
      (setq flowedit--cursor-line line)
      (eglot--signal-textDocument/didChange) ; (what was typed first, then where the cursor went)
      (jsonrpc-notify server :flowedit/cursor (list :uri (flowedit--uri) :position (eglot--pos-to-lsp-position))))))

;;; ------------------------------------------------------------------------- commands

(defun flowedit--server ()
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'flowedit-server)
      (user-error "FlowEdit: this buffer is not connected to flowedit (M-x eglot)"))
    server))

(defun flowedit--command (command arguments &optional then)
  "Run the server's COMMAND on the plist ARGUMENTS without waiting.
THEN, if given, gets the result in the current buffer."
  (let ((server (flowedit--server))
        (buffer (current-buffer)))
    (eglot--signal-textDocument/didChange) ; Eglot flushes before its deferred requests only
    (jsonrpc-async-request
     server :workspace/executeCommand (list :command command :arguments (vector arguments))
     :success-fn (lambda (result)
                   (when (and then (buffer-live-p buffer))
                     (with-current-buffer buffer (funcall then result))))
     :error-fn (lambda (error)
                 (unless (plist-get (plist-get error :data) :shown) ; (the server said it already)
                   (message "FlowEdit: %s: %s" command (or (plist-get error :message) error)))))))

(defun flowedit--uri ()
  (eglot--path-to-uri (buffer-file-name)))

(defun flowedit--streaming (result)
  "A command's RESULT started a stream in this buffer.
Unless its end was heard first."
  (let ((id (plist-get result :id)))
    (when (and id (not (flowedit--outcome id)))
      (setq flowedit--running id)
      (force-mode-line-update))))

;;;###autoload
(defun flowedit-rewrite (instruction beg end)
  "Rewrite the text between BEG and END following INSTRUCTION.
Interactively, the region, else the current line."
  (interactive
   (let ((beg (copy-marker (if (use-region-p) (region-beginning) (line-beginning-position))))
         (end (copy-marker (if (use-region-p) (region-end) (line-end-position)))))
     (list (read-string "Rewrite: ") beg end)))
  (flowedit--server)
  (let ((args (list :uri (flowedit--uri)
                    :range (list :start (eglot--pos-to-lsp-position beg) :end (eglot--pos-to-lsp-position end))
                    ;; the version the range is from: the server refuses it if Eglot had not reported all
                    :version eglot--versioned-identifier)))
    (unless (string-empty-p instruction) (setq args (append args (list :instruction instruction))))
    (deactivate-mark)
    (flowedit--command "flowedit.rewrite" args
                       (lambda (result)
                         (setq flowedit--last (plist-get result :id))
                         (flowedit--streaming result)))))

(defun flowedit-interrupt ()
  "Stop the rewrite streaming into this buffer, and its review.
What the review showed stays."
  (interactive)
  (flowedit--command "flowedit.interrupt" (list :uri (flowedit--uri))
                     (lambda (_) (setq flowedit--running nil) (force-mode-line-update))))

(defun flowedit-redirect (instruction)
  "Stop the streaming rewrite and rewrite the same region following INSTRUCTION."
  (interactive (list (read-string "Redirect: ")))
  (let ((id (or flowedit--running flowedit--last)))
    (unless id (user-error "FlowEdit: no rewrite to redirect in this buffer"))
    (flowedit--command "flowedit.redirect" (list :id id :instruction instruction) #'flowedit--streaming)))

(defun flowedit-revert ()
  "Put back what the last rewrite of this buffer replaced, in one step."
  (interactive)
  (flowedit--command "flowedit.revert" (list :uri (flowedit--uri))
                     (lambda (result)
                       (unless (eq (plist-get result :reverted) t)
                         (message "FlowEdit: %s" (or (plist-get result :reason) "nothing reverted"))))))

(defun flowedit-continue ()
  "Ask for the rest of the last rewrite of this buffer, which stopped early."
  (interactive)
  (when flowedit--last (remhash flowedit--last flowedit--figures))
  (flowedit--command "flowedit.continue" (list :uri (flowedit--uri)) #'flowedit--streaming))

(defvar-local flowedit--last-review nil "The id of the last review started in this buffer.")

;;;###autoload
(defun flowedit-review (scope &optional beg end instruction)
  "Review SCOPE of this buffer, following INSTRUCTION (nil: the server's).
SCOPE is `selection' (the text between BEG and END), `file', `changes'
\(its uncommitted changes against git HEAD) or `workspace' (every changed
file of the workspace).  Interactively: the region when it is active,
else the file; with \\[universal-argument] the file's uncommitted changes,
with two \\[universal-argument] the workspace's.  The findings show in Flymake
as the model writes them (\"flowedit [label]: ...\"); their fixes and
dismissals are Eglot's code actions (`eglot-code-actions');
`flowedit-interrupt' stops it."
  (interactive (cond ((equal current-prefix-arg '(16)) (list 'workspace))
                     (current-prefix-arg (list 'changes))
                     ((use-region-p) (list 'selection (region-beginning) (region-end)))
                     (t (list 'file))))
  (flowedit--server)
  (let ((args (list :scope (if (eq scope 'workspace) "changes" (symbol-name scope)))))
    (unless (eq scope 'workspace) (setq args (append args (list :uri (flowedit--uri)))))
    (when (eq scope 'selection)
      (setq args (append args (list :range (list :start (eglot--pos-to-lsp-position beg)
                                                 :end (eglot--pos-to-lsp-position end))))))
    (when (and instruction (not (string-empty-p instruction)))
      (setq args (append args (list :instruction instruction))))
    (deactivate-mark)
    (flowedit--command "flowedit.review" args
                       (lambda (result) (setq flowedit--last-review (plist-get result :id))))))

(defun flowedit-review-status (id)
  "The last figures the server sent for review ID.
A plist: :state (\"reviewing\", \"finished\", ...), :message, :findings,
:scope, ..."
  (gethash id flowedit--figures))

(defvar flowedit-check-setup-hook nil
  "Run in the report's buffer once `flowedit-check-setup' shows it.")

(defvar-local flowedit-check-verdict nil
  "In the report's buffer: `ok', or `problems' when the check found one.")

(defun flowedit-check-setup ()
  "Check the setup end to end.
Each feature's engine is asked once (its endpoint, its key), and what
Emacs can do is listed.  The report goes to the buffer
*FlowEdit setup check*; problems are also said in the echo area."
  (interactive)
  (message "FlowEdit: checking the setup...")
  (flowedit--command "flowedit.checkSetup" (list :uri (flowedit--uri))
                     (lambda (result)
                       (with-current-buffer (get-buffer-create "*FlowEdit setup check*")
                         (special-mode)
                         (let ((inhibit-read-only t))
                           (erase-buffer)
                           (insert (or (plist-get result :text) "")))
                         (setq flowedit-check-verdict (if (eq (plist-get result :ok) t) 'ok 'problems))
                         (display-buffer (current-buffer))
                         (run-hooks 'flowedit-check-setup-hook)))))

(defvar flowedit-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "r" #'flowedit-rewrite)
    (define-key map "k" #'flowedit-interrupt)
    (define-key map "d" #'flowedit-redirect)
    (define-key map "u" #'flowedit-revert)
    (define-key map "c" #'flowedit-continue)
    (define-key map "n" #'flowedit-accept-next-edit)
    (define-key map "x" #'flowedit-dismiss-next-edit)
    (define-key map "s" #'flowedit-check-setup)
    (define-key map "v" #'flowedit-review)
    map)
  "flowedit's commands; bind it to a prefix of your choice in `flowedit-mode-map'.")
(fset 'flowedit-command-map flowedit-command-map)

(defvar flowedit-mode-map (make-sparse-keymap) "Keys of `flowedit-mode'.")

(define-minor-mode flowedit-mode
  "flowedit in a buffer Eglot connected to it.
The mode line shows its state; changes are reported between keystrokes."
  :lighter (:eval (flowedit-mode-line))
  :keymap flowedit-mode-map
  (if flowedit-mode
      (progn (setq-local eglot-send-changes-idle-time flowedit-send-changes-idle-time)
             (add-hook 'post-command-hook #'flowedit--tell-cursor nil t))
    (kill-local-variable 'eglot-send-changes-idle-time)
    (remove-hook 'post-command-hook #'flowedit--tell-cursor t)
    (flowedit--clear-next-edit)))

(defun flowedit--managed ()
  "On `eglot-managed-mode-hook': `flowedit-mode' where the server is flowedit."
  (flowedit-mode (if (and (bound-and-true-p eglot--managed-mode)
                          (cl-typep (eglot-current-server) 'flowedit-server))
                     1 -1)))

(add-hook 'eglot-managed-mode-hook #'flowedit--managed)
(flowedit-register)

(provide 'flowedit)
;;; flowedit.el ends here
